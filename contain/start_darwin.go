package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
)

// On macOS there are no cgroups, pidfds or subreapers. The pgroup
// mechanism starts the command as the leader of a session and process
// group of its own, and finds its processes in the process table
// (kern.proc.all): the main process, its descendants, the members of its
// process group while it lives, and every member seen before, each named
// by pid and start time (members.go decides). A watcher walks the table
// whenever a member forks (kqueue NOTE_FORK) and every watchEvery, so
// that a process that a member starts and leaves (reparented to launchd)
// is known by the stop. Built and unit-tested on Linux, not yet run on
// macOS.

// watchEvery is how often the watcher walks the process table.
const watchEvery = 100 * time.Millisecond

type sysState struct {
	ec     *exec.Cmd
	main   identity.Token
	exitCh chan exitResult
	exit   *exitResult
	state  *os.ProcessState
	group  *pgroupState

	copies    sync.WaitGroup
	outR      []*os.File
	stdinW    *os.File
	childEnds []*os.File
}

func (s *sysState) processState() *os.ProcessState { return s.state }

func (c *Cmd) start() error { return c.startRun(c.startSys) }

// startSys is start once the receipt and the record are open: a failure
// is failStart's to clean up.
func (c *Cmd) startSys() error {
	if err := c.checkOptions(); err != nil {
		return err
	}
	c.rec.Mechanism = receipt.MechanismPgroup
	c.rec.Caveats = pgroupCaveats()
	if err := c.prepared(); err != nil {
		return err
	}
	if err := c.launch(); err != nil {
		return err
	}
	c.startedMain()
	go c.watch()
	go c.supervise()
	return nil
}

// checkOptions refuses what the pgroup mechanism cannot do, before
// anything is created.
func (c *Cmd) checkOptions() error {
	if c.CgroupParent != "" {
		return fmt.Errorf("contain: cgroup parent %q: %w on macOS (runs are contained by process group)", c.CgroupParent, errors.ErrUnsupported)
	}
	if c.Mechanism != "" && c.Mechanism != receipt.MechanismPgroup {
		return fmt.Errorf("contain: mechanism %q: %w on macOS (the mechanism is %s)", c.Mechanism, errors.ErrUnsupported, receipt.MechanismPgroup)
	}
	if c.Limits.IsZero() {
		return nil
	}
	const why = "macOS has no per-group limits tether can apply"
	if !c.BestEffortLimits {
		return fmt.Errorf("contain: %w: %s", errors.ErrUnsupported, why)
	}
	l := &receipt.Limits{Mode: "best-effort", Applied: []receipt.LimitSet{}}
	s := c.Limits
	for _, u := range []struct {
		name string
		set  bool
		v    any
	}{{"memory", s.Memory > 0, s.Memory}, {"memory_high", s.MemoryHigh > 0, s.MemoryHigh}, {"swap", s.SwapSet, s.Swap}, {"cpus", s.CPUs > 0, s.CPUs}, {"pids", s.Pids > 0, s.Pids}} {
		if u.set {
			l.NotApplied = append(l.NotApplied, receipt.LimitUnset{Name: u.name, Requested: fmt.Sprint(u.v), Reason: why})
		}
	}
	c.rec.Limits = l
	return nil
}

// pgroupCaveats say what the pgroup mechanism cannot guarantee.
func pgroupCaveats() []string {
	return []string{
		"no kernel container on macOS: members are found in the process table, as descendants of the main process, members of its process group while it lives, or processes seen as members before",
		"a process that a member starts in a session of its own and leaves (a double-forked daemon, reparented to launchd) before the walk of the table that the fork triggers (kqueue NOTE_FORK; at least every 100 ms, and at each step of the stop) is not seen, and escapes",
		"a member is signalled by pid after its start time is checked: between the check and kill(2) it could exit and its pid be reused (no pidfd on macOS)",
		"if tether itself is killed, nothing stops the command's processes at once (macOS has no parent-death signal or job object): tether reap, which every tether run does first, kills the recorded main process if its token still matches; what it started cannot be proven then, and is left alone",
	}
}

// launch starts the main process as the leader of a new session (and
// process group), identifies it, and waits for its exit in the
// background.
func (c *Cmd) launch() error {
	in, err := c.stdin()
	if err != nil {
		return err
	}
	out, errw, err := c.outputs()
	if err != nil {
		return err
	}
	ec := &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.env(), Dir: c.Dir, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if in != nil {
		ec.Stdin = in
	}
	if out != nil {
		ec.Stdout = out
	}
	if errw != nil {
		ec.Stderr = errw
	}
	err = ec.Start()
	for _, f := range c.sys.childEnds {
		f.Close()
	}
	c.sys.childEnds = nil
	if err != nil {
		return err
	}
	c.sys.ec = ec
	c.sys.exitCh = make(chan exitResult, 1)
	// The main process is our child until we wait for it: its pid cannot
	// change hands before the token is read.
	tok, terr := identity.Of(ec.Process.Pid)
	go func() {
		st, werr := ec.Process.Wait()
		c.sys.exitCh <- exitResult{state: st, err: werr, at: time.Now()}
	}()
	if terr != nil {
		// Killed here, by pid: it is our child, not yet waited for, so
		// the pid is still its own. abortStarted's protocol then walks
		// for a main that cannot be named, and finds nothing of it.
		ec.Process.Kill()
		c.sys.group = newPgroupState(macTable{}, identity.Token{PID: ec.Process.Pid}, os.Getpid())
		c.rec.Main = &receipt.Process{PID: ec.Process.Pid, Argv: append([]string(nil), c.Args...)}
		c.abortStarted(fmt.Errorf("contain: cannot identify the main process: %w", terr))
		return terr
	}
	c.sys.main = tok
	c.sys.group = newPgroupState(macTable{}, tok, os.Getpid())
	c.rec.Main = &receipt.Process{PID: tok.PID, Token: tok.String(), Argv: append([]string(nil), c.Args...), StartedAt: identity.StartedAt(tok)}
	return nil
}

// undoStart closes the child's ends of the pipes and reports whether the
// main process was started.
func (c *Cmd) undoStart() (ran bool) {
	for _, f := range c.sys.childEnds {
		f.Close()
	}
	return c.sys.ec != nil
}

// nothingRan has nothing more to end here.
func (c *Cmd) nothingRan() {}

// Signal sends sig to the main process, as os.Process.Signal; once it
// has exited it returns os.ErrProcessDone. To stop the run, use Stop: the
// main process alone leaves what it started.
func (c *Cmd) Signal(sig os.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.sys.ec == nil {
		return ErrNotStarted
	}
	if !c.rec.EndedAt.IsZero() {
		return os.ErrProcessDone
	}
	return c.sys.ec.Process.Signal(sig)
}

// processRecord is a member as a receipt lists it.
func (c *Cmd) processRecord(t identity.Token) *receipt.Process {
	return &receipt.Process{PID: t.PID, Token: t.String(), Argv: identity.Cmdline(t.PID), StartedAt: identity.StartedAt(t)}
}
