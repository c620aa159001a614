package budget

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// JobBudget is a budget as a Windows Job Object holds it. A job has a
// hard memory limit, a process count and a CPU hard cap; it has no soft
// memory limit (memory.high) and no separate swap limit, since its
// memory limit counts committed memory, RAM and page file alike. The
// mapping is pure, so that it is tested on every system; the job's own
// calls are in job_windows.go.
type JobBudget struct {
	// Memory is JobMemoryLimit: bytes committed by all members together
	// (private bytes, not resident memory). 0: none.
	Memory uint64
	// Processes is ActiveProcessLimit: members alive at once. pids.max
	// counts threads as well; a job counts processes. 0: none.
	Processes uint32
	// CPURate is the hard cap of JobObjectCpuRateControlInformation:
	// the share of all the host's processors, in 1/10,000. 0: none.
	CPURate uint32

	rec   receipt.Limits
	shown map[string]string // limit name → as requested
}

// cpuRateScale is what CpuRate counts a whole host's processors as.
const cpuRateScale = 10000

// ForJob maps spec onto a job on a host with ncpu logical processors. A
// limit a job has no equivalent for is an error wrapping limits.ErrUnavailable,
// or with bestEffort, recorded as not applied.
func ForJob(spec limits.Spec, ncpu int, bestEffort bool) (*JobBudget, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	b := &JobBudget{shown: map[string]string{}}
	b.rec.Mode = "strict"
	if bestEffort {
		b.rec.Mode = "best-effort"
	}
	for _, r := range requests(spec) {
		b.shown[r.name] = r.shown
		var err error
		switch r.name {
		case "memory":
			b.Memory = uint64(r.value)
		case "pids":
			if r.value > math.MaxUint32 {
				return nil, fmt.Errorf("%w: pids %s: a job counts at most %d processes", limits.ErrSyntax, r.shown, uint32(math.MaxUint32))
			}
			b.Processes = uint32(r.value)
		case "cpus":
			b.CPURate = cpuRate(spec.CPUs, ncpu)
		case "memory_high":
			err = fmt.Errorf("%w: memory_high: a Windows job has no soft memory limit (only --memory, a hard one)", limits.ErrUnavailable)
		case "swap":
			err = fmt.Errorf("%w: swap: a Windows job's memory limit counts committed memory in RAM and the page file together; there is no separate swap limit", limits.ErrUnavailable)
		}
		if err != nil {
			if !bestEffort {
				return nil, err
			}
			b.rec.NotApplied = append(b.rec.NotApplied, receipt.LimitUnset{Name: r.name, Requested: r.shown, Reason: err.Error()})
		}
	}
	return b, nil
}

// cpuRate is the CpuRate of cpus processors out of ncpu: at least 1, at
// most the whole host.
func cpuRate(cpus float64, ncpu int) uint32 {
	if ncpu < 1 {
		ncpu = 1
	}
	r := math.Round(cpus * cpuRateScale / float64(ncpu))
	return uint32(min(max(r, 1), cpuRateScale))
}

// refuse records that limit name cannot be held, as err says: an error
// wrapping limits.ErrUnavailable, or with best effort, not applied.
func (b *JobBudget) refuse(name string, err error) error {
	err = fmt.Errorf("%w: %s: %w", limits.ErrUnavailable, name, err)
	if b.rec.Mode != "best-effort" {
		return err
	}
	b.rec.NotApplied = append(b.rec.NotApplied, receipt.LimitUnset{Name: name, Requested: b.shown[name], Reason: err.Error()})
	return nil
}

// confirm records limit name as written to field and read back as back.
// A read-back that differs means the job does not hold the limit: an
// error wrapping limits.ErrUnavailable, or with best effort, not applied.
func (b *JobBudget) confirm(name, field string, written, back uint64) error {
	if back != written {
		return b.refuse(name, fmt.Errorf("the job does not keep it: %s was set to %d and reads back as %d", field, written, back))
	}
	set := receipt.LimitSet{Name: name, Requested: b.shown[name], Backend: "job", File: field, Written: strconv.FormatUint(written, 10), ReadBack: strconv.FormatUint(back, 10)}
	switch name {
	case "memory":
		set.Note = "committed memory of all processes in the job together (private bytes), not resident memory"
	case "pids":
		set.Note = "processes alive in the job at once; threads are not counted"
	case "cpus":
		set.Note = "hard cap, in 1/10,000 of all the host's processors"
	}
	b.rec.Applied = append(b.rec.Applied, set)
	return nil
}

// IsZero reports whether the job has no limit to set.
func (b *JobBudget) IsZero() bool { return b.Memory == 0 && b.Processes == 0 && b.CPURate == 0 }

// Receipt returns the receipt's limits section as it stands.
func (b *JobBudget) Receipt() *receipt.Limits { r := b.rec; return &r }
