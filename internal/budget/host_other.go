//go:build !linux

package budget

import (
	"errors"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/limits"
)

// Apply is not implemented on this system.
func Apply(spec limits.Spec, leaf *cgroup.Leaf, bestEffort bool) (*Budget, error) {
	return nil, errors.ErrUnsupported
}
