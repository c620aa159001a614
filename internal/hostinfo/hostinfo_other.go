//go:build !linux && !windows

package hostinfo

import (
	"errors"
	"os"
	"runtime"
)

// probe reports that tether's containment is Linux-only.
func probe(o Options) (Report, error) {
	r := newReport(runtime.GOOS)
	r.UID = os.Getuid()
	r.Mechanism = Mechanism{Default: MechanismError, Why: "tether's containment is implemented for Linux only"}
	for _, c := range LimitControllers {
		r.Limits = append(r.Limits, Limit{Controller: c, Where: WhereUnavailable, Why: "cgroups exist only on Linux"})
	}
	r.Advice = append(r.Advice, "tether needs Linux: cgroups, pidfds and clone3 are Linux features; run it on a Linux host or VM")
	return r, errors.ErrUnsupported
}
