package contain

import (
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/hooks"
)

// jobName is the name of run runID's job, in the caller's logon session
// (Local\): the name lets tether ls and status read the job of a
// session whose supervisor holds it. newJob refuses a name that exists,
// so while its creator lives the name is that run's job.
func jobName(runID string) string {
	return `Local\tether-job-` + strings.ReplaceAll(runID, `\`, "_")
}

// jobQueryAccess is what readJobUsage opens the job with.
const jobQueryAccess = 0x0004 // JOB_OBJECT_QUERY

// readJobUsage (hooks.ReadJobUsage) reads the usage of the job of run runID, which a live
// process of this user created (a session's supervisor). The caller
// proves that creator alive before and after, so that the name was the
// run's job throughout.
func readJobUsage(runID string) (hooks.JobUsage, error) {
	name, err := windows.UTF16PtrFromString(jobName(runID))
	if err != nil {
		return hooks.JobUsage{}, err
	}
	r, _, lastErr := procOpenJobObjectW.Call(jobQueryAccess, 0, uintptr(unsafe.Pointer(name)))
	if r == 0 {
		return hooks.JobUsage{}, os.NewSyscallError("OpenJobObject", lastErr)
	}
	j := &job{h: windows.Handle(r)}
	defer windows.CloseHandle(j.h)
	a, err := j.accounting()
	if err != nil {
		return hooks.JobUsage{}, err
	}
	u := hooks.JobUsage{Processes: int(a.ActiveProcesses), CPU: time.Duration(a.TotalUserTime+a.TotalKernelTime) * 100}
	u.Inside, _ = isProcessInJob(windows.CurrentProcess(), j.h)
	pids, err := j.pids()
	if err != nil {
		return u, err
	}
	for _, pid := range pids {
		u.CommitBytes += commitCharge(pid)
		u.PIDs = append(u.PIDs, int(pid))
	}
	return u, nil
}

// processMemoryCounters is PROCESS_MEMORY_COUNTERS.
type processMemoryCounters struct {
	Cb                         uint32
	PageFaultCount             uint32
	PeakWorkingSetSize         uintptr
	WorkingSetSize             uintptr
	QuotaPeakPagedPoolUsage    uintptr
	QuotaPagedPoolUsage        uintptr
	QuotaPeakNonPagedPoolUsage uintptr
	QuotaNonPagedPoolUsage     uintptr
	PagefileUsage              uintptr
	PeakPagefileUsage          uintptr
}

// commitCharge is process pid's commit charge (PagefileUsage, which
// Windows documents as the same as PrivateUsage; Wine fills only the
// former), 0 if it cannot be read (gone, or not ours).
func commitCharge(pid uint32) int64 {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.PROCESS_VM_READ, false, pid)
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(h)
	var c processMemoryCounters
	c.Cb = uint32(unsafe.Sizeof(c))
	if r, _, _ := procGetProcessMemoryInfo.Call(uintptr(h), uintptr(unsafe.Pointer(&c)), uintptr(c.Cb)); r == 0 {
		return 0
	}
	return int64(c.PagefileUsage)
}
