package contain

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/budget"
	"github.com/tether-run/tether/internal/crash"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/receipt"
)

type sysState struct {
	budget     *budget.Budget
	v1Err      error    // the spawner thread could not leave the v1 leaves
	v1Verified bool     // the spawner thread was proven in every v1 leaf before fork
	v1Leaves   []string // every v1 leaf the run created
	main       *identity.Handle
	exitCh     chan exitResult
	exit       *exitResult
	copies     sync.WaitGroup
	outR       []*os.File // read ends of the output pipes we copy from
	stdinW     *os.File
	proc       *os.Process // the main process, once spawned
	childEnds  []*os.File
	subreaper  bool   // this run holds the subreaper scope (guarded by scope.mu)
	watchID    uint64 // the group's id with the owner-death watcher, 0 if none
	// releaseStartFD lets the leaf's fd be closed again once the main
	// process is cloned into it.
	releaseStartFD func()
}

// processState is the main process's state once it was reaped.
func (s *sysState) processState() *os.ProcessState {
	if s.exit == nil {
		return nil
	}
	return s.exit.state
}

// owned is the set of children whose exit status belongs to os.Process.Wait.
// The orphan sweep never reaps them. The lock is held across fork+register
// and across the sweep's listing, so a child is never seen half-registered.
var owned = struct {
	sync.Mutex
	pids map[int]bool
}{pids: map[int]bool{}}

func (c *Cmd) start() error { return c.startRun(c.startSys) }

// startSys is start once the receipt and the record are open: a failure
// is failStart's to clean up.
func (c *Cmd) startSys() error {
	if err := c.holdSubreaper(); err != nil {
		return err
	}
	crash.Point("before-leaf")
	if err := c.chooseMechanism(); err != nil {
		return err
	}
	crash.Point("after-leaf")
	if c.track != nil && c.StopSignal != 0 {
		c.track.rec.StopSignal = stop.SignalName(c.StopSignal) // what reap and the watcher send
	}
	if err := c.applyLimits(); err != nil {
		return err
	}
	if err := c.prepared(); err != nil {
		return err
	}
	if c.leaf != nil {
		c.watchOwner()
	}
	crash.Point("before-start")
	ec, err := c.buildExec()
	if err != nil {
		c.releaseStartFD()
		return err
	}
	if err := c.launch(ec); err != nil {
		return err
	}
	crash.Point("after-start")
	c.startedMain()
	if c.leaf == nil {
		c.watchOwner() // the fallback's group is known by its main process
	}
	go c.supervise()
	return nil
}

// releaseStartFD ends the hold StartFD took on the leaf's fd.
func (c *Cmd) releaseStartFD() {
	if c.sys.releaseStartFD != nil {
		c.sys.releaseStartFD()
		c.sys.releaseStartFD = nil
	}
}

// chooseMechanism creates the leaf, or settles on the fallback.
func (c *Cmd) chooseMechanism() error {
	if c.Mechanism == receipt.MechanismFallback {
		c.useFallback("fallback requested")
		return nil
	}
	home, err := delegate.Home{Dir: c.CgroupParent, Proof: delegate.ProofNamed}, error(nil)
	if home.Dir == "" {
		home, err = delegate.Parent(context.Background())
	}
	parent := home.Dir
	if err == nil && !cloneIntoCgroup() {
		err = ErrNoCloneIntoCgroup
	}
	var leaf *cgroup.Leaf
	if err == nil {
		leaf, err = cgroup.Create(parent) // checks the parent first
	}
	switch {
	case err == nil:
	case c.CgroupParent != "":
		return err // a parent the caller chose is never silently replaced
	case c.Mechanism == receipt.MechanismCgroup:
		return fmt.Errorf("%w: %w", ErrNoCgroup, err)
	default:
		c.useFallback(err.Error())
		return nil
	}
	c.leaf = leaf
	c.rec.Mechanism = receipt.MechanismCgroup
	c.rec.Caveats = []string{}
	c.rec.Cgroup = &receipt.Cgroup{Path: leaf.Path, ID: leaf.ID, Parent: leaf.Parent, Delegation: string(home.Proof)}
	if home.Scope != nil {
		c.rec.Cgroup.Scope = home.Scope.Unit
	}
	return nil
}

func (c *Cmd) useFallback(why string) {
	c.rec.Mechanism = receipt.MechanismFallback
	c.rec.Caveats = fallbackCaveats
	if c.Mechanism != receipt.MechanismFallback {
		c.rec.FallbackReason = why
	}
	c.marker = randid.Hex(8)
}

var fallbackCaveats = []string{
	"descendants are found by walking the process tree, not held by the kernel: a process that escapes between walks is found only if it is reparented to tether",
	"if tether itself is SIGKILLed, its watcher (or tether reap) stops the main process by its token and its descendants by the group marker in their environment: a descendant that cleared its environment survives",
	"no cgroup.kill: a fork storm is stopped by repeated walks and SIGKILLs, bounded by the kill wait",
}

func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// buildExec prepares the os/exec command. Non-file stdio gets pipes we copy
// ourselves: os/exec would otherwise tie Wait to pipe EOF, which daemons
// holding the pipe would delay until they are stopped.
func (c *Cmd) buildExec() (*exec.Cmd, error) {
	ec := &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.env(), Dir: c.Dir}
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if c.leaf != nil {
		fd, release, err := c.leaf.StartFD()
		if err != nil {
			return nil, err
		}
		c.sys.releaseStartFD = release
		attr.UseCgroupFD, attr.CgroupFD = true, fd
	}
	if (c.leaf == nil || c.hooks.OwnProcessGroup) && !isTerminal(c.Stdin) {
		// Its own process group keeps terminal-less job control signals
		// from reaching the group behind tether's back, and the command's
		// kill(0, sig) from reaching its supervisor. On a terminal it
		// stays in ours: a background group would stop on SIGTTIN.
		attr.Setpgid = true
	}
	ec.SysProcAttr = attr

	var err error
	if ec.Stdin, err = c.stdin(); err != nil {
		return nil, err
	}
	if ec.Stdout, ec.Stderr, err = c.outputs(); err != nil {
		return nil, err
	}
	return ec, nil
}

// processRecord describes a member for the receipt. The argv is what
// /proc showed when the member was found; a process caught inside execve
// shows none for a moment, so an empty one is read again briefly.
func (c *Cmd) processRecord(t identity.Token) *receipt.Process {
	argv := identity.Cmdline(t.PID)
	for i := 0; len(argv) == 0 && i < 5; i++ {
		time.Sleep(time.Millisecond)
		argv = identity.Cmdline(t.PID)
	}
	return &receipt.Process{PID: t.PID, Token: t.String(), Argv: argv, StartedAt: identity.StartedAt(t)}
}

// undoStart removes what a start made for a process that never ran (its
// leaves, v1 ones included: a failed exec under --memory used to leave
// them, and the parent's controllers it enabled), and reports whether one
// ran.
func (c *Cmd) undoStart() (ran bool) {
	if c.sys.proc != nil {
		return true
	}
	c.removeBudget()
	if c.leaf != nil {
		if rerr := c.leaf.Remove(); rerr == nil && c.rec.Cgroup != nil {
			c.rec.Cgroup.Removed = true
			c.sys.budget.Restore()
		}
	}
	return false
}

// nothingRan ends what a start set up for a run that never had a
// process: the owner-death watch and the subreaper (no orphan can come).
func (c *Cmd) nothingRan() {
	c.unwatchOwner()
	c.releaseSubreaper()
}
