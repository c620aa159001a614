package contain

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/stop"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/receipt"
)

// stopSignalName is what the receipt's stop.signal says on Windows.
const stopSignalName = "CTRL_BREAK_EVENT"

// supervise waits for the run to end (main exit, timeout or Stop), runs the
// stop protocol, and completes the receipt.
func (c *Cmd) supervise() {
	defer close(c.done)
	reason := c.awaitEnd()
	p := &jobProtocol{Log: c.stopLog(), c: c, j: c.sys.job, reason: reason}
	p.run()
	c.awaitCopies()
	c.endStorage()
	c.finish(p)
	c.track.finish(&c.rec, c.waitErr)
}

// groupEmpty reports whether the job holds no process.
func (c *Cmd) groupEmpty() bool {
	n, err := c.sys.job.active()
	return err == nil && n == 0
}

// emptyWake is the job's ACTIVE_PROCESS_ZERO, which wakes waitEmpty
// before its tick.
func (c *Cmd) emptyWake() <-chan struct{} { return c.sys.job.zero }

// jobProtocol is the job as the stop driver (stop.Drive) sees it:
// CTRL_BREAK_EVENT to the command's process group, the grace,
// TerminateJobObject, the wait for an empty job, then every member's
// handle checked.
type jobProtocol struct {
	stop.Log
	c      *Cmd
	j      *job
	reason Reason
	strag  []receipt.Process
	nstrag int
	acct   jobAccounting
}

func (p *jobProtocol) run() {
	j := p.j
	j.listed()
	if p.reason == ReasonMainExit {
		for _, m := range j.live() {
			if m.PID != int(p.c.sys.pid) {
				p.nstrag++
				if len(p.strag) < receipt.MaxListed {
					p.strag = append(p.strag, m)
				}
			}
		}
	}
	stop.Drive(p, p.c.policy(), &p.Log)
}

// Term sends CTRL_BREAK_EVENT to the command's process group (created
// with CREATE_NEW_PROCESS_GROUP; its id is the main process's pid), the
// only polite request a console process group has: the stop signal is
// not Windows'. A grace helps only if it was sent.
func (p *jobProtocol) Term(_ *stop.Log, _ syscall.Signal) (empty, wait bool) {
	active, err := p.j.active()
	if err == nil && active == 0 {
		p.Step("term", "no process in the job", 0, nil)
		return true, false
	}
	err = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, p.c.sys.pid)
	obs := fmt.Sprintf("%s to process group %d; %d processes in the job", stopSignalName, p.c.sys.pid, active)
	if err != nil {
		err = fmt.Errorf("GenerateConsoleCtrlEvent: %w", err)
		obs = fmt.Sprintf("%s could not be sent; %d processes in the job", stopSignalName, active)
	} else {
		p.Evidence.Signalled = int(active)
	}
	p.Step("term", obs, int(active), err)
	return false, err == nil
}

// Wait waits up to d for the job's ACTIVE_PROCESS_ZERO.
func (p *jobProtocol) Wait(d time.Duration) (bool, string, error) {
	empty, err := p.j.waitEmpty(d, nil)
	if empty {
		return true, "job empty", err
	}
	n, _ := p.j.active()
	return false, fmt.Sprintf("%d processes in the job", n), err
}

// WaitQuiet waits up to d for the job to be empty, signalling nothing.
func (p *jobProtocol) WaitQuiet(d time.Duration) bool {
	empty, err := p.j.waitEmpty(d, nil)
	return empty && err == nil
}

// Kill terminates the job and waits for the kernel to report it empty.
func (p *jobProtocol) Kill(_ *stop.Log, killWait time.Duration) bool {
	at := time.Now()
	active, qerr := p.j.active()
	err := errors.Join(qerr, p.j.terminate(killExitCode))
	p.StepFrom(at, "kill", fmt.Sprintf("TerminateJobObject (exit code %d); %d processes in the job", killExitCode, active), int(active), err)
	empty, werr := p.j.waitEmpty(killWait, nil)
	if empty {
		p.Step("kill-wait", "job empty", 0, werr)
	} else {
		n, _ := p.j.active()
		p.Step("kill-wait", fmt.Sprintf("%d processes in the job after %s", n, killWait), int(n), werr)
	}
	return empty
}

func (p *jobProtocol) EmptyBy() string { return "job accounting ActiveProcesses 0" }

// Confirm collects the main process's exit, checks the job's accounting
// (the evidence of emptiness) and every member's handle, then closes the
// job.
func (p *jobProtocol) Confirm(_ *stop.Log, deadline time.Time) {
	c, j := p.c, p.j
	if c.sys.exit == nil {
		select {
		case ex := <-c.sys.exitCh:
			c.sys.exit = &ex
		case <-time.After(time.Until(deadline)):
		}
	}
	a, err := j.accounting()
	p.acct = a
	ev := &p.Evidence
	ev.Empty, ev.EmptyBy, ev.EmptyAt = false, "", time.Time{}
	if err == nil && a.ActiveProcesses == 0 {
		ev.Empty, ev.EmptyBy, ev.EmptyAt = true, p.EmptyBy(), time.Now().UTC()
		select {
		case <-j.zero:
			ev.EmptyBy += " and completion port ACTIVE_PROCESS_ZERO"
		default:
		}
	}
	j.listed() // a member the port did not announce
	var gone int
	gone, ev.Unconfirmed = j.confirm(time.Second)
	j.mu.Lock()
	ev.MembersSeen = j.seen
	j.mu.Unlock()
	ev.ConfirmedGone = gone
	obs := fmt.Sprintf("%d processes ever in the job, %d active; %d member handles signalled", a.TotalProcesses, a.ActiveProcesses, gone)
	if n := len(ev.Unconfirmed); n > 0 {
		obs += fmt.Sprintf(", %d not", n)
	}
	p.Step("reap", obs, int(a.ActiveProcesses), err)
	if b := c.sys.budget; b != nil && ev.Empty {
		o := b.Outcome(j.h, j.memoryHits.Load(), j.processHits.Load())
		p.Step("limits", fmt.Sprintf("read the job's peak memory (%d bytes) and the port's limit hits (memory %d, processes %d)", o.MemoryPeakBytes, o.MemoryLimitHits, o.PidsLimitHits), 0, nil)
	}
	cerr := j.close()
	p.Step("remove", "job handle closed (KILL_ON_JOB_CLOSE)", 0, cerr)
}

// finish fills in how the run ended and releases what the run held.
func (c *Cmd) finish(p *jobProtocol) {
	c.exe.wait() // before the lock: Receipt() does not wait for a hash
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &c.rec
	c.exe.into(r)
	r.Stop = receipt.Stop{Reason: string(p.reason), Signal: stopSignalName, Steps: p.Steps}
	r.Stragglers, r.StragglersTotal = p.strag, p.nstrag
	if b := c.sys.budget; b != nil {
		r.Limits = b.Receipt()
	}
	r.TimedOut = p.reason == ReasonTimeout
	p.Evidence.MainReaped = c.sys.exit != nil && c.sys.exit.err == nil
	r.Evidence = p.Evidence
	r.StopConfirmed = p.Evidence.Empty && p.Evidence.MainReaped && len(p.Evidence.Unconfirmed) == 0
	jb := *r.Job
	jb.TotalProcesses, jb.ActiveProcesses, jb.Closed = p.acct.TotalProcesses, p.acct.ActiveProcesses, true
	r.Job = &jb
	windows.CloseHandle(c.sys.proc)
	if c.sys.stdinW != nil {
		c.sys.stdinW.Close()
	}
	r.Exit = receipt.Exit{Code: 125, MainStatus: -1}
	if ex := c.sys.exit; ex != nil && ex.err == nil {
		r.Exit = receipt.Exit{Code: int(ex.code), MainStatus: int(ex.code)}
	}
	r.Exit.Code = endCode(Reason(r.Stop.Reason), r.Exit)
	r.EndedAt = time.Now().UTC()
	r.DurationMS = r.EndedAt.Sub(r.StartedAt).Milliseconds()
	c.waitErr = waitError(r, nil)
}

// imageArgv is a member's image path, for the receipt: reading another
// process's command line needs more than a handle gives.
func imageArgv(h windows.Handle) []string {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) != nil {
		return []string{}
	}
	return []string{windows.UTF16ToString(buf[:n])}
}
