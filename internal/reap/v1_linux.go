package reap

import (
	"errors"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/registry"
)

// removeV1 removes the cgroup v1 leaves a dead record's run created for
// its limits (see cgroup.RemoveRecordedV1 for what is proven first).
func removeV1(rec *registry.Record) error {
	var errs []error
	for _, p := range rec.V1Cgroups {
		errs = append(errs, cgroup.RemoveRecordedV1(p))
	}
	return errors.Join(errs...)
}
