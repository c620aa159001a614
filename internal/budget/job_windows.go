package budget

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// errJobQuery wraps a failed read-back query.
var errJobQuery = errors.New("limits: the job's limits cannot be read back")

// cpuRateControl is JOBOBJECT_CPU_RATE_CONTROL_INFORMATION with its
// union read as CpuRate.
type cpuRateControl struct {
	ControlFlags uint32
	CpuRate      uint32
}

const (
	cpuRateControlEnable  = 0x1 // JOB_OBJECT_CPU_RATE_CONTROL_ENABLE
	cpuRateControlHardCap = 0x4 // JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP
)

// Apply sets the budget on job h before any process is in it, keeping
// flags (the job's other limit flags, KILL_ON_JOB_CLOSE among them), and
// reads every value back. A limit the system refuses, or does not report
// back as set, is an error wrapping limits.ErrUnavailable, or with best effort,
// not applied.
func (b *JobBudget) Apply(h windows.Handle, flags uint32) error {
	if uint64(uintptr(b.Memory)) != b.Memory {
		return fmt.Errorf("%w: memory %s is more than this process can address", limits.ErrSyntax, b.shown["memory"])
	}
	memory, processes, cpus := b.Memory, uint64(b.Processes), uint64(b.CPURate)
	if memory > 0 || processes > 0 {
		var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
		info.BasicLimitInformation.LimitFlags = flags
		if memory > 0 {
			info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_JOB_MEMORY
			info.JobMemoryLimit = uintptr(memory)
		}
		if processes > 0 {
			info.BasicLimitInformation.LimitFlags |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
			info.BasicLimitInformation.ActiveProcessLimit = b.Processes
		}
		if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
			err = fmt.Errorf("the system refuses it: %w", os.NewSyscallError("SetInformationJobObject(ExtendedLimit)", err))
			for _, l := range []struct {
				name string
				v    *uint64
			}{{"memory", &memory}, {"pids", &processes}} {
				if *l.v > 0 {
					if err := b.refuse(l.name, err); err != nil {
						return err
					}
					*l.v = 0
				}
			}
		}
	}
	if cpus > 0 {
		rc := cpuRateControl{ControlFlags: cpuRateControlEnable | cpuRateControlHardCap, CpuRate: b.CPURate}
		if _, err := windows.SetInformationJobObject(h, windows.JobObjectCpuRateControlInformation,
			uintptr(unsafe.Pointer(&rc)), uint32(unsafe.Sizeof(rc))); err != nil {
			if err := b.refuse("cpus", fmt.Errorf("the system refuses it: %w", os.NewSyscallError("SetInformationJobObject(CpuRateControl)", err))); err != nil {
				return err
			}
			cpus = 0
		}
	}

	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if memory > 0 || processes > 0 {
		if err := windows.QueryInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil); err != nil {
			return fmt.Errorf("%w: %w", errJobQuery, os.NewSyscallError("QueryInformationJobObject(ExtendedLimit)", err))
		}
	}
	lf := info.BasicLimitInformation.LimitFlags
	if memory > 0 {
		back := uint64(0)
		if lf&windows.JOB_OBJECT_LIMIT_JOB_MEMORY != 0 {
			back = uint64(info.JobMemoryLimit)
		}
		if err := b.confirm("memory", "JobObjectExtendedLimitInformation.JobMemoryLimit", memory, back); err != nil {
			return err
		}
	}
	if cpus > 0 {
		var rc cpuRateControl
		if err := windows.QueryInformationJobObject(h, windows.JobObjectCpuRateControlInformation,
			uintptr(unsafe.Pointer(&rc)), uint32(unsafe.Sizeof(rc)), nil); err != nil {
			return fmt.Errorf("%w: %w", errJobQuery, os.NewSyscallError("QueryInformationJobObject(CpuRateControl)", err))
		}
		back := uint64(0)
		if rc.ControlFlags&(cpuRateControlEnable|cpuRateControlHardCap) == cpuRateControlEnable|cpuRateControlHardCap {
			back = uint64(rc.CpuRate)
		}
		if err := b.confirm("cpus", "JobObjectCpuRateControlInformation.CpuRate (hard cap)", cpus, back); err != nil {
			return err
		}
	}
	if processes > 0 {
		back := uint64(0)
		if lf&windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS != 0 {
			back = uint64(info.BasicLimitInformation.ActiveProcessLimit)
		}
		if err := b.confirm("pids", "JobObjectExtendedLimitInformation.ActiveProcessLimit", processes, back); err != nil {
			return err
		}
	}
	return nil
}

// HostCPUs is the number of logical processors a job's CPU rate is a
// share of: all of them, in every processor group.
func HostCPUs() int { return int(windows.GetActiveProcessorCount(windows.ALL_PROCESSOR_GROUPS)) }

// Outcome reads what the job did against the budget: its peak committed
// memory, and the limit hits its completion port reported (memoryHits,
// processHits). Call it before the job is closed; it is also stored in
// the budget's receipt.
func (b *JobBudget) Outcome(h windows.Handle, memoryHits, processHits int64) *receipt.Outcome {
	o := &receipt.Outcome{Sources: []string{}, MemoryLimitHits: memoryHits, PidsLimitHits: processHits}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	if windows.QueryInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil) == nil {
		o.MemoryPeakBytes = int64(info.PeakJobMemoryUsed)
		o.Sources = append(o.Sources, "JobObjectExtendedLimitInformation.PeakJobMemoryUsed")
	}
	o.Sources = append(o.Sources, "completion port JOB_MEMORY_LIMIT and ACTIVE_PROCESS_LIMIT messages")
	b.rec.Outcome = o
	return o
}
