package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tether-run/tether/internal/budget"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// limitFlags are the budget and admission flags of run and start.
type limitFlags struct {
	memory, memoryHigh, swap, cpus, pids string
	limitsMode                           string
	requireFree                          []string
	storageMax                           []string
}

func (f *limitFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.memory, "memory", "", "memory limit for the whole group (`SIZE`: 512M, 4G); OOM-kills past it")
	fl.StringVar(&f.memoryHigh, "memory-high", "", "memory `SIZE` above which the group is throttled and reclaimed (cgroup v2 only)")
	fl.StringVar(&f.swap, "swap", "", "swap limit `SIZE` for the group (0: no swap)")
	fl.StringVar(&f.cpus, "cpus", "", "CPU limit as a number of CPUs (`N`: 2, 0.5)")
	fl.StringVar(&f.pids, "pids", "", "limit on the number of processes and threads in the group (`N`)")
	fl.StringVar(&f.limitsMode, "limits", "strict", "strict: refuse to start when a limit cannot be applied; best-effort: start and record what was not")
	fl.StringArrayVar(&f.requireFree, "require-free", nil, "refuse to start unless the filesystem holding PATH has SIZE free (`PATH=SIZE`, repeatable)")
	fl.StringArrayVar(&f.storageMax, "storage-max", nil, "stop the group (reason storage) when the files under PATH hold more than SIZE, counted every second; refuse to start when they already do (`PATH=SIZE`, repeatable)")
}

// ceilings parses --storage-max.
func (f *limitFlags) ceilings() ([]limits.Storage, error) {
	var out []limits.Storage
	for _, v := range f.storageMax {
		s, err := limits.ParseStorage(v)
		if err != nil {
			return nil, fmt.Errorf("--storage-max: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// budget parses the limit flags.
func (f *limitFlags) budget() (limits.Spec, error) {
	var s limits.Spec
	var err error
	size := func(flag, v string, dst *int64) {
		if v == "" || err != nil {
			return
		}
		if *dst, err = limits.ParseSize(v); err == nil && *dst == 0 && flag != "swap" {
			err = fmt.Errorf("--%s %s: must be more than 0", flag, v)
		} else if err != nil {
			err = fmt.Errorf("--%s: %w", flag, err)
		}
	}
	size("memory", f.memory, &s.Memory)
	size("memory-high", f.memoryHigh, &s.MemoryHigh)
	size("swap", f.swap, &s.Swap)
	s.SwapSet = f.swap != ""
	if f.cpus != "" && err == nil {
		if s.CPUs, err = limits.ParseCPUs(f.cpus); err != nil {
			err = fmt.Errorf("--cpus: %w", err)
		}
	}
	if f.pids != "" && err == nil {
		if s.Pids, err = strconv.ParseInt(f.pids, 10, 64); err != nil || s.Pids <= 0 {
			err = fmt.Errorf("--pids %q: want a positive whole number", f.pids)
		}
	}
	if err == nil {
		err = s.Validate()
	}
	switch f.limitsMode {
	case "strict", "best-effort":
	default:
		err = errors.Join(err, fmt.Errorf("--limits %q: want strict or best-effort", f.limitsMode))
	}
	return s, err
}

// admit checks --require-free before anything is created; a check that
// fails, or cannot be made, is a refusal.
func (f *limitFlags) admit() error { return admitFree(f.requireFree) }

// admitFree checks --require-free's PATH=SIZE values, as admit.
func admitFree(requireFree []string) error {
	for _, pf := range requireFree {
		path, sz, ok := strings.Cut(pf, "=")
		if !ok || path == "" {
			return fmt.Errorf("--require-free %q: want PATH=SIZE", pf)
		}
		need, err := limits.ParseSize(sz)
		if err != nil {
			return fmt.Errorf("--require-free %q: %w", pf, err)
		}
		if err := budget.CheckFree(path, need); err != nil {
			return &refusal{reason: receipt.RefusedRequireFree, err: err}
		}
	}
	return nil
}
