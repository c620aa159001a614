package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/receipt"
)

// containFlags choose the containment of run and start.
type containFlags struct {
	cgroupParent string
	mechanism    string
}

// register adds --cgroup-parent (described by parentHelp) and --mechanism.
func (f *containFlags) register(fl *pflag.FlagSet, parentHelp string) {
	fl.StringVar(&f.cgroupParent, "cgroup-parent", "", parentHelp)
	fl.StringVar(&f.mechanism, "mechanism", "auto", "containment to use: auto, cgroup or fallback")
}

// resolve parses --mechanism ("" for auto) and defaults --cgroup-parent to
// $TETHER_CGROUP_PARENT.
func (f *containFlags) resolve(e *env) (receipt.Mechanism, error) {
	if f.cgroupParent == "" {
		f.cgroupParent = e.getenv("TETHER_CGROUP_PARENT")
	}
	switch f.mechanism {
	case "auto", "":
		return "", nil
	case "cgroup":
		return receipt.MechanismCgroup, nil
	case "fallback":
		return receipt.MechanismFallback, nil
	}
	return "", fmt.Errorf("--mechanism %q: want auto, cgroup or fallback", f.mechanism)
}

// prepare finds a delegated home for the leaves when no parent was named,
// moving this process where that is what it takes (delegate.Prepare): a
// scope of its own under systemd when its cgroup is not delegated to it
// (bound to the caller's unit unless ownScope, for sessions that must
// outlive it), or a child of its delegated cgroup when limits need that
// cgroup empty. On a host without systemd nothing moves. What could not be
// had is left for contain to report (it falls back, or refuses with
// --mechanism cgroup).
func (f *containFlags) prepare(e *env, mech receipt.Mechanism, limits, ownScope bool, argv []string) {
	if f.cgroupParent != "" || mech == receipt.MechanismFallback || !delegate.Booted() {
		return
	}
	h, err := delegate.Prepare(context.Background(), delegate.PrepareOptions{
		Limits: limits, OwnScope: ownScope,
		Scope: delegate.Options{PartOf: !ownScope, Description: "tether: " + strings.Join(argv, " ")},
	})
	switch {
	case err != nil:
		e.warnf("no delegated cgroup: %v", err)
	case h.Note != "":
		e.warnf("%s", h.Note)
	}
}
