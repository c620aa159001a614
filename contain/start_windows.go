package contain

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/budget"
	"github.com/tether-run/tether/receipt"
)

var (
	// ErrNoJob is wrapped by Start when the Job Object cannot be created
	// or set up. Nothing was started: without the job there is no run.
	ErrNoJob = errors.New("contain: cannot create the job object")
	// ErrStopSignal is returned by Start when StopSignal is set: on
	// Windows the polite stop is always CTRL_BREAK_EVENT.
	ErrStopSignal = errors.New("contain: a stop signal cannot be chosen on Windows (the polite stop is CTRL_BREAK_EVENT)")
)

// killExitCode is the exit code TerminateJobObject gives every member:
// 128+9, what a shell reports for a process killed by SIGKILL on Unix.
const killExitCode = 137

type sysState struct {
	job       *job
	budget    *budget.JobBudget // nil: no limits
	proc      windows.Handle    // the main process
	pid       uint32
	exitCh    chan exitResult
	exit      *exitResult
	copies    sync.WaitGroup
	outR      []*os.File
	stdinW    *os.File
	childEnds []*os.File
}

// processState is nil: Windows gives no *os.ProcessState for a process
// os/exec did not start.
func (s *sysState) processState() *os.ProcessState { return nil }

type exitResult struct {
	code uint32
	err  error
	at   time.Time
}

func (c *Cmd) start() error { return c.startRun(c.startSys) }

// startSys is start once the receipt and the record are open: a failure
// is failStart's to clean up.
func (c *Cmd) startSys() error {
	if err := c.checkOptions(); err != nil {
		return err
	}
	j, err := newJob(jobName(c.RunID))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoJob, err)
	}
	c.sys.job = j
	c.rec.Mechanism = receipt.MechanismJobObject
	c.rec.Caveats = jobCaveats()
	c.rec.Job = &receipt.Job{Flags: jobFlagNames, Nested: j.nested, Wine: wineVersion()}
	if b := c.sys.budget; b != nil {
		// Before any process is in the job: a member never runs
		// outside its budget.
		err := b.Apply(j.h, jobLimitFlags)
		c.rec.Limits = b.Receipt()
		if err != nil {
			return err
		}
	}
	if err := c.prepared(); err != nil {
		return err
	}
	if err := c.launch(); err != nil {
		return err
	}
	c.startedMain()
	go c.supervise()
	return nil
}

// checkOptions refuses what the job mechanism does not do yet, before
// anything is created.
func (c *Cmd) checkOptions() error {
	if c.StopSignal != 0 {
		return ErrStopSignal
	}
	if c.CgroupParent != "" {
		return fmt.Errorf("contain: cgroup parent %q: %w on Windows (runs are contained in a job object)", c.CgroupParent, errors.ErrUnsupported)
	}
	if c.Mechanism != "" && c.Mechanism != receipt.MechanismJobObject {
		return fmt.Errorf("contain: mechanism %q: %w on Windows (the mechanism is %s)", c.Mechanism, errors.ErrUnsupported, receipt.MechanismJobObject)
	}
	if c.Limits.IsZero() {
		return nil
	}
	b, err := budget.ForJob(c.Limits, budget.HostCPUs(), c.BestEffortLimits)
	if err != nil {
		return err
	}
	c.sys.budget = b
	c.rec.Limits = b.Receipt()
	return nil
}

// jobCaveats says what the job mechanism cannot guarantee here.
func jobCaveats() []string {
	cv := []string{
		"the polite stop is CTRL_BREAK_EVENT to the command's process group: it reaches only console processes of that group on tether's console; others (GUI programs, processes with a group or console of their own) get no polite request and are ended by TerminateJobObject after the grace",
		"work the command hands to a process outside the job (a service, a COM or WMI server, the Task Scheduler) is not in the job and is not stopped",
		"member identity is boot id + pid + creation time through a held process handle; the boot id is Windows' boot counter (PrefetchParameters\\BootId), or the boot time where there is none (Wine: the wineserver's start)",
	}
	if v := wineVersion(); v != "" {
		cv = append(cv, "under Wine "+v+", not Windows: Wine implements job membership, breakaway denial, KILL_ON_JOB_CLOSE and TerminateJobObject, but not job limits; timings and exit codes are Wine's")
	}
	return cv
}

// launch creates the main process inside the job: the attribute list's
// PROC_THREAD_ATTRIBUTE_JOB_LIST puts it there before its first
// instruction, so no instant exists in which it is outside. Only its three
// standard handles are inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST).
func (c *Cmd) launch() error {
	std, err := c.stdHandles()
	if err != nil {
		return err
	}
	defer func() {
		for _, h := range std {
			windows.CloseHandle(h)
		}
	}()
	pi, err := createInJob(c.sys.job.h, c.Path, c.Args, c.env(), c.Dir, std)
	for _, f := range c.sys.childEnds {
		f.Close()
	}
	c.sys.childEnds = nil
	if err != nil {
		return err
	}
	windows.CloseHandle(pi.Thread)
	c.sys.proc, c.sys.pid = pi.Process, pi.ProcessId
	// The proof that the job held it from the start: nothing else could
	// have put it there before this check.
	if in, err := isProcessInJob(pi.Process, c.sys.job.h); err != nil || !in {
		windows.TerminateProcess(pi.Process, killExitCode)
		c.startMain()
		c.abortStarted(fmt.Errorf("%w: CreateProcess with PROC_THREAD_ATTRIBUTE_JOB_LIST left it outside the job (%v)", ErrPlacement, err))
		return ErrPlacement
	}
	c.startMain()
	return nil
}

// createInJob creates a process of path with args, env and dir in job,
// with std as its standard handles (inheritable; the only handles it
// inherits, PROC_THREAD_ATTRIBUTE_HANDLE_LIST), in a process group of
// its own. It is in the job from its creation (PROC_THREAD_ATTRIBUTE_JOB_LIST).
func createInJob(job windows.Handle, path string, args, env []string, dir string, std []windows.Handle) (windows.ProcessInformation, error) {
	var pi windows.ProcessInformation
	attrs, err := windows.NewProcThreadAttributeList(2)
	if err != nil {
		return pi, os.NewSyscallError("InitializeProcThreadAttributeList", err)
	}
	defer attrs.Delete()
	jobs := []windows.Handle{job}
	if err := attrs.Update(procThreadAttributeJobList, unsafe.Pointer(&jobs[0]), unsafe.Sizeof(jobs[0])); err != nil {
		return pi, os.NewSyscallError("UpdateProcThreadAttribute(JOB_LIST)", err)
	}
	if err := attrs.Update(windows.PROC_THREAD_ATTRIBUTE_HANDLE_LIST, unsafe.Pointer(&std[0]), uintptr(len(std))*unsafe.Sizeof(std[0])); err != nil {
		return pi, os.NewSyscallError("UpdateProcThreadAttribute(HANDLE_LIST)", err)
	}
	si := &windows.StartupInfoEx{ProcThreadAttributeList: attrs.List()}
	si.Cb = uint32(unsafe.Sizeof(*si))
	si.Flags = windows.STARTF_USESTDHANDLES
	si.StdInput, si.StdOutput, si.StdErr = std[0], std[1], std[2]

	app, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return pi, &os.PathError{Op: "CreateProcess", Path: path, Err: err}
	}
	cmdline, err := windows.UTF16PtrFromString(windows.ComposeCommandLine(args))
	if err != nil {
		return pi, &os.PathError{Op: "CreateProcess", Path: path, Err: err}
	}
	block, err := envBlock(env)
	if err != nil {
		return pi, err
	}
	var wdir *uint16
	if dir != "" {
		if wdir, err = windows.UTF16PtrFromString(dir); err != nil {
			return pi, &os.PathError{Op: "CreateProcess", Path: dir, Err: err}
		}
	}
	flags := uint32(windows.CREATE_UNICODE_ENVIRONMENT | windows.EXTENDED_STARTUPINFO_PRESENT | windows.CREATE_NEW_PROCESS_GROUP)
	if err := windows.CreateProcess(app, cmdline, nil, nil, true, flags, &block[0], wdir, &si.StartupInfo, &pi); err != nil {
		return pi, &os.PathError{Op: "CreateProcess", Path: path, Err: err}
	}
	return pi, nil
}

// startMain records the main process and waits for its exit in the
// background.
func (c *Cmd) startMain() {
	h := c.sys.proc
	var mainTok string
	if dup, err := dupHandle(h, false); err == nil {
		if m := c.sys.job.adopt(c.sys.pid, dup); m != nil {
			mainTok = m.token
			c.rec.Main = &receipt.Process{PID: int(c.sys.pid), Token: m.token, Argv: append([]string(nil), c.Args...), StartedAt: m.started}
		}
	}
	if mainTok == "" {
		c.rec.Main = &receipt.Process{PID: int(c.sys.pid), Argv: append([]string(nil), c.Args...)}
	}
	c.sys.exitCh = make(chan exitResult, 1)
	go func() {
		var ex exitResult
		if !waitExit(h, -1) {
			ex.err = errors.New("contain: the main process's handle cannot be waited on")
		} else if err := windows.GetExitCodeProcess(h, &ex.code); err != nil {
			ex.err = os.NewSyscallError("GetExitCodeProcess", err)
		}
		ex.at = time.Now()
		c.sys.exitCh <- ex
	}()
}

// stdHandles returns inheritable duplicates of the command's standard
// handles: the caller's files as they are, pipes for other readers and
// writers, NUL for nil.
func (c *Cmd) stdHandles() ([]windows.Handle, error) {
	in, err := c.stdin()
	if err != nil {
		return nil, err
	}
	out, errw, err := c.outputs()
	if err != nil {
		return nil, err
	}
	std, nuls, err := inheritStd([]any{in, out, errw})
	c.sys.childEnds = append(c.sys.childEnds, nuls...)
	return std, err
}

// inheritStd returns inheritable duplicates of three standard handles:
// each *os.File's own, NUL for anything else; nuls are the NUL files it
// opened, for the caller to close once the process is created. On error
// nothing is left open but nuls.
func inheritStd(vs []any) (std []windows.Handle, nuls []*os.File, err error) {
	for i, v := range vs {
		f, _ := v.(*os.File)
		if f == nil {
			f, err = os.OpenFile(os.DevNull, map[bool]int{true: os.O_RDONLY, false: os.O_WRONLY}[i == 0], 0)
			if err != nil {
				break
			}
			nuls = append(nuls, f)
		}
		var h windows.Handle
		if h, err = dupHandle(windows.Handle(f.Fd()), true); err != nil {
			err = fmt.Errorf("contain: standard handle %d: %w", i, err)
			break
		}
		std = append(std, h)
	}
	if err != nil {
		for _, h := range std {
			windows.CloseHandle(h)
		}
		return nil, nuls, err
	}
	return std, nuls, nil
}

// dupHandle duplicates h within this process.
func dupHandle(h windows.Handle, inherit bool) (windows.Handle, error) {
	self := windows.CurrentProcess()
	var d windows.Handle
	if err := windows.DuplicateHandle(self, h, self, &d, 0, inherit, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return 0, os.NewSyscallError("DuplicateHandle", err)
	}
	return d, nil
}

// envBlock is env as CreateProcess takes it: NUL-terminated UTF-16
// strings, then one more NUL.
func envBlock(env []string) ([]uint16, error) {
	var b []uint16
	for _, kv := range env {
		u, err := windows.UTF16FromString(kv)
		if err != nil {
			return nil, fmt.Errorf("contain: environment entry %q: %w", kv, err)
		}
		b = append(b, u...)
	}
	return append(b, 0), nil
}

// undoStart closes the child's ends of the pipes and, when no process
// was created, the job; it reports whether one was.
func (c *Cmd) undoStart() (ran bool) {
	for _, f := range c.sys.childEnds {
		f.Close()
	}
	if c.sys.proc != 0 {
		return true
	}
	if c.sys.job != nil {
		c.sys.job.close()
		c.rec.Job.Closed = true
	}
	return false
}

// nothingRan has nothing more to end here.
func (c *Cmd) nothingRan() {}

// spawnErrorCode is StartErrorCode for a failed CreateProcess.
func spawnErrorCode(pe *os.PathError) (int, bool) {
	if pe.Op != "CreateProcess" {
		return 0, false
	}
	switch {
	case errors.Is(pe, windows.ERROR_FILE_NOT_FOUND), errors.Is(pe, windows.ERROR_PATH_NOT_FOUND):
		return 127, true
	case errors.Is(pe, windows.ERROR_ACCESS_DENIED), errors.Is(pe, windows.ERROR_BAD_EXE_FORMAT):
		return 126, true
	}
	return 0, false
}
