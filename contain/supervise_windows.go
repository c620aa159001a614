package contain

import (
	"errors"
	"fmt"
	"time"

	"github.com/tether-run/tether/receipt"
	"golang.org/x/sys/windows"
)

// stopSignalName is what the receipt's stop.signal says on Windows.
const stopSignalName = "CTRL_BREAK_EVENT"

// supervise waits for the run to end (main exit, timeout or Stop), runs the
// stop protocol, and completes the receipt.
func (c *Cmd) supervise() {
	defer close(c.done)
	reason := c.awaitEnd()
	p := &jobProtocol{stepLog: stepLog{c: c, t0: time.Now()}, j: c.sys.job, reason: reason}
	p.run()
	c.awaitCopies()
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

// jobProtocol is one run of the stop protocol on a job: CTRL_BREAK_EVENT
// to the command's process group, the grace, TerminateJobObject, the wait
// for an empty job, then every member's handle checked.
type jobProtocol struct {
	stepLog
	j      *job
	reason Reason
	ev     receipt.Evidence
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
	n, err := j.active()
	if err == nil && n > 0 {
		if p.term(n) {
			p.graceWait()
		} else {
			p.step("grace", "skipped: the polite request reached no process, so nothing would end on it", int(n), nil)
		}
	}
	if n, err = j.active(); err != nil || n > 0 {
		p.kill(n, err)
	}
	p.confirm()
}

// term sends CTRL_BREAK_EVENT to the command's process group (created with
// CREATE_NEW_PROCESS_GROUP; its id is the main process's pid), and reports
// whether it was sent.
func (p *jobProtocol) term(active uint32) bool {
	err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, p.c.sys.pid)
	obs := fmt.Sprintf("%s to process group %d; %d processes in the job", stopSignalName, p.c.sys.pid, active)
	if err != nil {
		err = fmt.Errorf("GenerateConsoleCtrlEvent: %w", err)
		obs = fmt.Sprintf("%s could not be sent; %d processes in the job", stopSignalName, active)
	} else {
		p.ev.Signalled = int(active)
	}
	p.step("term", obs, int(active), err)
	return err == nil
}

// graceWait waits for the job to empty within the grace period, unless
// Kill cuts it short.
func (p *jobProtocol) graceWait() {
	began := time.Now()
	g := p.c.graceNow()
	empty, err := p.j.waitEmpty(time.Until(began.Add(g)), p.c.skipCh)
	n, _ := p.j.active()
	switch {
	case empty:
		p.step("grace", "job empty", 0, err)
	case time.Since(began) < g:
		p.step("grace", fmt.Sprintf("cut short by a second stop request; %d processes in the job", n), int(n), err)
	default:
		p.step("grace", fmt.Sprintf("%d processes in the job after %s", n, g), int(n), err)
	}
}

// kill terminates the job and waits for the kernel to report it empty.
func (p *jobProtocol) kill(active uint32, qerr error) {
	at := time.Now()
	p.ev.KillUsed = true
	err := errors.Join(qerr, p.j.terminate(killExitCode))
	p.stepFrom(at, "kill", fmt.Sprintf("TerminateJobObject (exit code %d); %d processes in the job", killExitCode, active), int(active), err)
	empty, werr := p.j.waitEmpty(p.c.killWaitNow(), nil)
	if empty {
		p.step("kill-wait", "job empty", 0, werr)
	} else {
		n, _ := p.j.active()
		p.step("kill-wait", fmt.Sprintf("%d processes in the job after %s", n, p.c.killWaitNow()), int(n), werr)
	}
}

// confirm collects the main process's exit, checks the job's accounting
// and every member's handle, then closes the job.
func (p *jobProtocol) confirm() {
	c, j := p.c, p.j
	if c.sys.exit == nil {
		select {
		case ex := <-c.sys.exitCh:
			c.sys.exit = &ex
		case <-time.After(p.c.killWaitNow()):
		}
	}
	a, err := j.accounting()
	p.acct = a
	if err == nil && a.ActiveProcesses == 0 {
		p.ev.Empty = true
		p.ev.EmptyAt = time.Now().UTC()
		p.ev.EmptyBy = "job accounting ActiveProcesses 0"
		select {
		case <-j.zero:
			p.ev.EmptyBy += " and completion port ACTIVE_PROCESS_ZERO"
		default:
		}
	}
	j.listed() // a member the port did not announce
	var gone int
	gone, p.ev.Unconfirmed = j.confirm(time.Second)
	j.mu.Lock()
	p.ev.MembersSeen = j.seen
	j.mu.Unlock()
	p.ev.ConfirmedGone = gone
	obs := fmt.Sprintf("%d processes ever in the job, %d active; %d member handles signalled", a.TotalProcesses, a.ActiveProcesses, gone)
	if n := len(p.ev.Unconfirmed); n > 0 {
		obs += fmt.Sprintf(", %d not", n)
	}
	p.step("reap", obs, int(a.ActiveProcesses), err)
	if b := c.sys.budget; b != nil && p.ev.Empty {
		o := b.Outcome(j.h, j.memoryHits.Load(), j.processHits.Load())
		p.step("limits", fmt.Sprintf("read the job's peak memory (%d bytes) and the port's limit hits (memory %d, processes %d)", o.MemoryPeakBytes, o.MemoryLimitHits, o.PidsLimitHits), 0, nil)
	}
	cerr := j.close()
	p.step("remove", "job handle closed (KILL_ON_JOB_CLOSE)", 0, cerr)
}

// finish fills in how the run ended and releases what the run held.
func (c *Cmd) finish(p *jobProtocol) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &c.rec
	r.Stop = receipt.Stop{Reason: string(p.reason), Signal: stopSignalName, Steps: p.steps}
	r.Stragglers, r.StragglersTotal = p.strag, p.nstrag
	if b := c.sys.budget; b != nil {
		r.Limits = b.Receipt()
	}
	r.TimedOut = p.reason == ReasonTimeout
	p.ev.MainReaped = c.sys.exit != nil && c.sys.exit.err == nil
	r.Evidence = p.ev
	r.StopConfirmed = p.ev.Empty && p.ev.MainReaped && len(p.ev.Unconfirmed) == 0
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
	if r.TimedOut {
		r.Exit.Code = 124
	}
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
