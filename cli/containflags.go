package cli

import (
	"fmt"

	"github.com/spf13/pflag"
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
