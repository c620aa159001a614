//go:build !linux

package limits

import (
	"errors"

	"github.com/tether-run/tether/cgroup"
)

// Apply is not implemented on this system.
func Apply(spec Spec, leaf *cgroup.Leaf, bestEffort bool) (*Budget, error) {
	return nil, errors.ErrUnsupported
}
