package contain

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
	"golang.org/x/sys/windows"
)

// What golang.org/x/sys/windows (v0.50.0) does not define.
const (
	// procThreadAttributeJobList is PROC_THREAD_ATTRIBUTE_JOB_LIST
	// (Windows 10): the jobs a process is created in.
	procThreadAttributeJobList = 0x0002000D

	// Messages a job posts to its completion port (winnt.h).
	jobMsgActiveProcessLimit = 3
	jobMsgActiveProcessZero  = 4
	jobMsgNewProcess         = 6
	jobMsgJobMemoryLimit     = 10

	// drainStopKey is a completion key no job uses: it ends drain.
	drainStopKey = ^uintptr(0)
)

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// jobCompletionPort is JOBOBJECT_ASSOCIATE_COMPLETION_PORT.
type jobCompletionPort struct {
	Key  uintptr
	Port windows.Handle
}

var (
	kernel32                        = windows.NewLazySystemDLL("kernel32.dll")
	procIsProcessInJob              = kernel32.NewProc("IsProcessInJob")
	procCreateJobObjectW            = kernel32.NewProc("CreateJobObjectW")
	procOpenJobObjectW              = kernel32.NewProc("OpenJobObjectW")
	procGetProcessMemoryInfo        = kernel32.NewProc("K32GetProcessMemoryInfo")
	procGetQueuedCompletion         = kernel32.NewProc("GetQueuedCompletionStatus")
	procWineGetVersion              = windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version")
	errJobClosed                    = errors.New("contain: job closed")
	jobFlagNames                    = []string{"KILL_ON_JOB_CLOSE"}
	jobLimitFlags            uint32 = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
)

// The job queries tether's own host report and session status read, not
// an embedder: they reach those through internal/hooks.
func init() {
	hooks.WineVersion, hooks.InJob, hooks.ReadJobUsage = wineVersion, inJob, readJobUsage
}

// inJob reports whether tether itself runs in a job (a CI runner's, a
// service's): the run's job is then nested in it.
func inJob() bool {
	in, err := isProcessInJob(windows.CurrentProcess(), 0)
	return in && err == nil
}

// wineVersion is the version of Wine this process runs under, or "" on
// Windows: Wine exports ntdll!wine_get_version, Windows does not.
var wineVersion = sync.OnceValue(func() string {
	if procWineGetVersion.Find() != nil {
		return ""
	}
	r, _, _ := procWineGetVersion.Call()
	if r == 0 {
		return "unknown"
	}
	// r points to a static string in ntdll, not Go memory.
	return windows.BytePtrToString(*(**byte)(unsafe.Pointer(&r)))
})

// isProcessInJob reports whether process is in job; job 0 asks whether it
// is in any job. Wine needs PROCESS_QUERY_INFORMATION on the handle where
// Windows accepts PROCESS_QUERY_LIMITED_INFORMATION.
func isProcessInJob(process, job windows.Handle) (bool, error) {
	var in int32
	r, _, err := procIsProcessInJob.Call(uintptr(process), uintptr(job), uintptr(unsafe.Pointer(&in)))
	if r == 0 {
		return false, os.NewSyscallError("IsProcessInJob", err)
	}
	return in != 0, nil
}

// job is the Job Object of one run, with the members its completion port
// announced. Breakaway is denied by leaving JOB_OBJECT_LIMIT_BREAKAWAY_OK
// and SILENT_BREAKAWAY_OK unset; KILL_ON_JOB_CLOSE makes the kernel kill
// every member when the last handle closes, so tether's death, however it
// comes, ends the run. The handles are not inheritable: a member holding
// one would keep the job alive after tether.
type job struct {
	h      windows.Handle
	port   windows.Handle
	nested bool // tether itself runs in a job
	zero   chan struct{}
	zOnce  sync.Once
	// Limit hits the port reported: a process refused for the active
	// process limit, an allocation refused for the job memory limit.
	processHits, memoryHits atomic.Int64
	done                    chan struct{} // drain returned

	mu sync.Mutex
	// members are keyed by pid: Windows does not reuse the pid of a
	// process while a handle to it is open, and each member is held.
	members map[uint32]*member
	seen    int // distinct members ever tracked
	gone    int // members whose handle was seen signalled
	closed  bool
}

// member is a process proven to be in the job, held by a handle so that
// its pid cannot be reused while tether looks at it.
type member struct {
	pid     uint32
	token   string
	h       windows.Handle
	started time.Time
}

// newJob creates the job named name, sets its limits and ties it to a
// completion port. A job of that name that exists already is refused:
// the run's job is always new. On any failure nothing is left open: the
// start must fail closed.
func newJob(name string) (*job, error) {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, fmt.Errorf("job name %q: %w", name, err)
	}
	r, _, lastErr := procCreateJobObjectW.Call(0, uintptr(unsafe.Pointer(n)))
	h := windows.Handle(r)
	if h == 0 {
		return nil, os.NewSyscallError("CreateJobObject", lastErr)
	}
	if lastErr == windows.ERROR_ALREADY_EXISTS {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("CreateJobObject: a job named %s exists already", name)
	}
	j := &job{h: h, zero: make(chan struct{}), done: make(chan struct{}), members: map[uint32]*member{}}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = jobLimitFlags
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return nil, os.NewSyscallError("SetInformationJobObject(ExtendedLimit)", err)
	}
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		windows.CloseHandle(h)
		return nil, os.NewSyscallError("CreateIoCompletionPort", err)
	}
	assoc := jobCompletionPort{Key: uintptr(h), Port: port}
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectAssociateCompletionPortInformation,
		uintptr(unsafe.Pointer(&assoc)), uint32(unsafe.Sizeof(assoc))); err != nil {
		windows.CloseHandle(port)
		windows.CloseHandle(h)
		return nil, os.NewSyscallError("SetInformationJobObject(AssociateCompletionPort)", err)
	}
	j.port = port
	j.nested = inJob()
	go j.drain()
	return j, nil
}

// drain reads the completion port until close: a new process is tracked
// at once (its handle holds its identity), and ACTIVE_PROCESS_ZERO closes
// zero. Windows documents these messages as not guaranteed, so they only
// add to what the accounting query says; they never replace it.
func (j *job) drain() {
	defer close(j.done)
	for {
		var msg uint32
		var key, ov uintptr
		// The OVERLAPPED pointer carries the pid: read it as a number
		// (a uintptr), never as a Go pointer.
		r, _, _ := procGetQueuedCompletion.Call(uintptr(j.port), uintptr(unsafe.Pointer(&msg)),
			uintptr(unsafe.Pointer(&key)), uintptr(unsafe.Pointer(&ov)), uintptr(windows.INFINITE))
		switch {
		case r == 0 && ov == 0:
			return // the port failed or was closed
		case key == drainStopKey:
			return
		case key != uintptr(j.h):
		case msg == jobMsgNewProcess:
			j.track(uint32(ov))
		case msg == jobMsgActiveProcessZero:
			j.zOnce.Do(func() { close(j.zero) })
		case msg == jobMsgActiveProcessLimit:
			j.processHits.Add(1)
		case msg == jobMsgJobMemoryLimit:
			j.memoryHits.Add(1)
		}
	}
}

// track opens pid and keeps it as a member if the opened process is in
// the job: a pid reused by a process outside the job is not one.
func (j *job) track(pid uint32) {
	h, err := windows.OpenProcess(memberAccess, false, pid)
	if err != nil {
		return // gone, and not held by anyone: nothing to stop
	}
	j.adopt(pid, h)
}

// memberAccess is what the handle of a member may do. Wine needs both
// query rights: QUERY_INFORMATION for IsProcessInJob,
// QUERY_LIMITED_INFORMATION for GetProcessTimes (Windows accepts either).
const memberAccess = windows.SYNCHRONIZE | windows.PROCESS_QUERY_INFORMATION | windows.PROCESS_QUERY_LIMITED_INFORMATION

// adopt keeps h, a handle to process pid, as a member if it is in the
// job, and closes it otherwise. Members already seen exited are dropped
// and counted, so a long run holds handles to live processes only.
func (j *job) adopt(pid uint32, h windows.Handle) *member {
	in, err := isProcessInJob(h, j.h)
	if err != nil || !in {
		windows.CloseHandle(h)
		return nil
	}
	m := &member{pid: pid, h: h}
	// The token is identity's: boot + pid + creation time, which names
	// one process for good. A member whose times cannot be read gets no
	// token. It is read before the lock: under Wine it can take a while.
	if tok, err := identity.OfHandle(h, int(pid)); err == nil {
		m.started = identity.StartedAt(tok)
		m.token = tok.String()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		windows.CloseHandle(h)
		return nil
	}
	if old, ok := j.members[pid]; ok {
		windows.CloseHandle(h)
		return old
	}
	for p, o := range j.members {
		if identity.Exited(o.h) {
			windows.CloseHandle(o.h)
			delete(j.members, p)
			j.gone++
		}
	}
	j.members[pid] = m
	j.seen++
	return m
}

// listed tracks every process the job lists now: the port's messages may
// be lost, the list may not.
func (j *job) listed() {
	pids, err := j.pids()
	if err != nil {
		return
	}
	for _, pid := range pids {
		j.track(pid)
	}
}

// pids is the job's BasicProcessIdList.
func (j *job) pids() ([]uint32, error) {
	for n := 64; ; n *= 4 {
		// JOBOBJECT_BASIC_PROCESS_ID_LIST: two DWORDs, then ULONG_PTRs.
		buf := make([]uintptr, 1+n)
		err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicProcessIdList,
			uintptr(unsafe.Pointer(&buf[0])), uint32(len(buf)*int(unsafe.Sizeof(buf[0]))), nil)
		if err != nil && err != windows.ERROR_MORE_DATA {
			return nil, os.NewSyscallError("QueryInformationJobObject(BasicProcessIdList)", err)
		}
		assigned, listed := uint32(buf[0]), uint32(buf[0]>>32)
		if err == nil && assigned <= listed {
			out := make([]uint32, listed)
			for i := range out {
				out[i] = uint32(buf[1+i])
			}
			return out, nil
		}
	}
}

// accounting is the job's basic accounting.
func (j *job) accounting() (jobAccounting, error) {
	var a jobAccounting
	err := windows.QueryInformationJobObject(j.h, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&a)), uint32(unsafe.Sizeof(a)), nil)
	if err != nil {
		return a, os.NewSyscallError("QueryInformationJobObject(BasicAccounting)", err)
	}
	return a, nil
}

// active is the number of processes in the job now.
func (j *job) active() (uint32, error) {
	a, err := j.accounting()
	return a.ActiveProcesses, err
}

// waitEmpty waits until the job holds no process, until d has passed, or
// until cut is closed; it says whether the job was seen empty.
func (j *job) waitEmpty(d time.Duration, cut <-chan struct{}) (bool, error) {
	deadline := time.Now().Add(d)
	pause := time.Millisecond
	for {
		n, err := j.active()
		if err != nil {
			return false, err
		}
		if n == 0 {
			return true, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-j.zero:
		case <-cut:
			t.Stop()
			n, err := j.active()
			return err == nil && n == 0, err
		case <-t.C:
		}
		t.Stop()
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// terminate ends every process in the job with code.
func (j *job) terminate(code uint32) error {
	if err := windows.TerminateJobObject(j.h, code); err != nil {
		return os.NewSyscallError("TerminateJobObject", err)
	}
	return nil
}

// confirm waits, up to d in all, for every member's handle to be
// signalled, closes them, and returns the tokens of those that were not.
func (j *job) confirm(d time.Duration) (gone int, unconfirmed []string) {
	deadline := time.Now().Add(d)
	j.mu.Lock()
	defer j.mu.Unlock()
	for p, m := range j.members {
		if waitExit(m.h, max(time.Until(deadline), 0)) {
			j.gone++
		} else {
			unconfirmed = append(unconfirmed, m.token)
		}
		windows.CloseHandle(m.h)
		delete(j.members, p)
	}
	return j.gone, unconfirmed
}

// live describes the members not yet seen exited.
func (j *job) live() []receipt.Process {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []receipt.Process
	for _, m := range j.members {
		if !identity.Exited(m.h) {
			out = append(out, receipt.Process{PID: int(m.pid), Token: m.token, Argv: imageArgv(m.h), StartedAt: m.started})
		}
	}
	return out
}

// close ends drain, closes the port and the job. With KILL_ON_JOB_CLOSE
// this kills whatever is still in the job if no other handle is open.
func (j *job) close() error {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return errJobClosed
	}
	j.closed = true
	for p, m := range j.members {
		windows.CloseHandle(m.h)
		delete(j.members, p)
	}
	j.mu.Unlock()
	if err := windows.PostQueuedCompletionStatus(j.port, 0, drainStopKey, nil); err == nil {
		<-j.done
	}
	err := windows.CloseHandle(j.port)
	if cerr := windows.CloseHandle(j.h); cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("contain: closing the job: %w", err)
	}
	return nil
}

// waitExit waits up to d (forever if d < 0) for the process behind h to
// exit, and says whether it did. A wake that identity.Exited does not
// confirm (Wine signals a process not yet running) is waited past.
func waitExit(h windows.Handle, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		ms := uint32(windows.INFINITE)
		if d >= 0 {
			ms = uint32(max(time.Until(deadline), 0) / time.Millisecond)
		}
		if ev, err := windows.WaitForSingleObject(h, ms); err != nil || ev != windows.WAIT_OBJECT_0 {
			return false
		}
		if identity.Exited(h) {
			return true
		}
		if d >= 0 && time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}
