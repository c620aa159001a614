// Package contain runs a command so that everything it starts can be found
// and stopped, and proves it did.
//
// It is shaped like os/exec. A Cmd runs one command; what that command
// starts — children, setsid'd daemons, double-forked grandchildren — is a
// member of its group, and the run is not over until the group is:
//
//	ctx, cancel := context.WithTimeout(ctx, 20*time.Minute)
//	defer cancel()
//	c := contain.CommandContext(ctx, "npm", "run", "e2e")
//	out, err := c.Output()      // like exec.Cmd.Output
//	var ee *exec.ExitError
//	if errors.As(err, &ee) { ... } // the main process failed
//	r := c.Receipt()            // what happened, as evidence, JSON-ready
//
// # The group
//
// On Linux the command is cloned straight into a fresh cgroup v2 leaf
// (clone3 with CLONE_INTO_CGROUP), so no instant exists in which it is
// outside; its descendants are born inside and cannot leave. Where no
// writable cgroup v2 parent exists, the fallback mechanism tracks the
// process tree instead and the receipt says what that cannot guarantee
// (Receipt().Caveats). On Windows the group is a Job Object the command
// is created in. Mechanism chooses or requires one.
//
// # The end of a run and the stop protocol
//
// A run ends when the main process exits (with UntilEmpty: when the group
// is empty), when Timeout expires, when the context given to
// CommandContext is done (Cancel), or on Stop. Then the stop protocol
// runs on whatever is left: StopSignal (SIGTERM) to every member, Grace
// for them to exit, then cgroup.kill, and Wait returns only when the
// kernel has confirmed the group empty, every member was reaped and the
// leaf removed. When that cannot be proven, Wait's error wraps
// ErrNotConfirmed and the receipt says what is missing: a run is never
// reported stopped on hope.
//
// Wait's error is an *ExitError when the main process did not exit 0; it
// wraps the *exec.ExitError os/exec would have returned, so code written
// for os/exec keeps working (errors.As with *exec.ExitError).
//
// # Crash recovery
//
// If this program dies (SIGKILL included), a watcher process it started
// stops the group (internal/watch). With StateDir set, the run also keeps
// a record there from just before the command is spawned (its leaf named
// in it) until its stop is confirmed: if the watcher dies too, `tether
// reap` finds the record, proves by identity what is still the run's, and
// stops it. A death between making the leaf and writing the record
// leaves only an empty leaf, which reap reports as an orphan.
//
// # Effects on the calling process
//
// On Linux, while at least one Cmd runs (from Start to the end of its
// stop protocol), the calling process is a child subreaper
// (PR_SET_CHILD_SUBREAPER), so that orphans of the groups come back to it
// and are reaped by contain; the last run out gives the setting back (a
// program that set it itself keeps it). contain never reaps a child it
// did not recognise as a member, so the program's other os/exec children
// keep their exit statuses; but a grandchild of those that is orphaned
// while a run is going on is reparented to the program too, and stays a
// zombie unless the program reaps it (nothing tells such an orphan from
// the program's own child). Processes are started from one goroutine
// locked to its OS thread for the life of the program (Pdeathsig is tied
// to the forking thread). contain installs no signal handlers.
package contain

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

var (
	// ErrStarted is returned by Start when the Cmd was already started.
	ErrStarted = errors.New("contain: already started")
	// ErrNotStarted is returned by Wait, Stop and Join before Start.
	ErrNotStarted = errors.New("contain: not started")
	// ErrNoCgroup is returned by Start when Mechanism is MechanismCgroup and
	// no writable cgroup v2 parent exists. Nothing was started.
	ErrNoCgroup = errors.New("contain: cgroup containment required but not available")
	// ErrNotConfirmed is wrapped by Wait's error when the stop protocol
	// ended without proof that the group is empty and reaped; the receipt
	// says what is missing. The main process's failure, if any, is wrapped
	// too (errors.As with *ExitError still finds it).
	ErrNotConfirmed = errors.New("contain: stop not confirmed")
	// ErrPlacement is returned by Start when the started process is not in
	// the leaf it was cloned into. It was killed.
	ErrPlacement = errors.New("contain: process is not in its leaf")
	// ErrNoCloneIntoCgroup is wrapped by Start when the kernel cannot start
	// a process straight into a cgroup (CLONE_INTO_CGROUP, Linux 5.7) and
	// the cgroup mechanism was required or a parent was given; in auto
	// mode the fallback is used instead. Nothing was started.
	ErrNoCloneIntoCgroup = errors.New("contain: the kernel cannot start a process into a cgroup (clone3 CLONE_INTO_CGROUP needs Linux 5.7)")
	// ErrNoJoin is returned by Join when the group cannot take another
	// member: it has no leaf (the fallback mechanism holds only the
	// descendants of its main process), or its stop has begun.
	ErrNoJoin = errors.New("contain: cannot join the group")
	// ErrRecord is wrapped by Start when Registry is set and the run's
	// record could not be written. Nothing was started, and the leaf made
	// for it is removed again: the same command may be started again
	// with another Cmd.
	ErrRecord = errors.New("contain: run record not written")
)

// A Reason says why a run ended; the receipt records it (Stop.Reason).
type Reason string

// The reasons a run ends.
const (
	ReasonMainExit Reason = "main-exit" // the main process exited
	ReasonTimeout  Reason = "timeout"   // Timeout expired
	ReasonContext  Reason = "context"   // CommandContext's context was done
	ReasonSignal   Reason = "signal"    // the program was signalled (BeginStop)
	ReasonRequest  Reason = "request"   // Stop, Kill or BeginStop
	ReasonError    Reason = "error"     // the run could not go on (the receipt's error says why)
	// ReasonEmpty: with UntilEmpty, the group emptied by itself.
	ReasonEmpty Reason = "empty"
	// ReasonStartFailed: nothing ran (the receipt's error says why).
	ReasonStartFailed Reason = "start-failed"
	// ReasonStorage: a storage ceiling was crossed, or its census could
	// not complete (the receipt's storage says which).
	ReasonStorage Reason = "storage"
)

// RunIDEnv is the environment variable that carries the run id into the
// command, so that what it writes (logs, reports, its own receipts) can
// name the run whose receipt describes it.
const RunIDEnv = "TETHER_RUN_ID"

// Defaults for the two bounded waits of the stop protocol.
const (
	DefaultGrace    = 10 * time.Second
	DefaultKillWait = 5 * time.Second
)

// NoGrace as a Grace (of Cmd, SetGrace and session.StopOptions)
// kills at once after the stop signal: any negative
// duration means the same; zero means the default.
const NoGrace time.Duration = -1

// Cmd is a command run inside its own containment. Set its fields before
// Start; a Cmd cannot be reused.
type Cmd struct {
	// Path, Args, Env, Dir, Stdin, Stdout and Stderr mean what they mean in
	// os/exec.Cmd. Args includes the command name. An *os.File is handed to
	// the command as it is; any other reader or writer goes through a pipe
	// that contain copies, and the copies have ended when Wait returns.
	Path   string
	Args   []string
	Env    []string
	Dir    string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// Cancel is called when the context of CommandContext is done before
	// the run ended. CommandContext sets it to begin the stop protocol
	// (reason ReasonContext: StopSignal, Grace, then the kill), where
	// os/exec kills the main process alone. A Cancel that returns nil
	// makes Wait return the context's error when the main process
	// otherwise succeeded, as os/exec does.
	Cancel func() error
	// WaitDelay, if positive, bounds two waits, as in os/exec: after
	// Cancel, the run's end (then the group is killed without what is
	// left of the grace); and once the group is stopped, the copying of
	// its output to non-file writers (then the pipes are closed; zero
	// means one second, not forever: the group that could hold them is
	// gone).
	WaitDelay time.Duration

	// Timeout, if positive, begins the stop protocol after this long, and
	// the run's exit code is 124, as timeout(1) makes it.
	Timeout time.Duration
	// Grace is how long members have after StopSignal before they are
	// killed (default DefaultGrace; NoGrace none). Set it before
	// Start; afterwards use SetGrace.
	Grace time.Duration
	// KillWait bounds the wait for emptiness after the kill (default
	// DefaultKillWait).
	KillWait time.Duration
	// StopSignal is the first signal of the stop protocol, sent to every
	// member before the grace (0: SIGTERM), as timeout -s and systemd's
	// KillSignal= choose it. The receipt records it (Stop.Signal).
	StopSignal syscall.Signal
	// StopExec, if set, is a command run at the start of every stop,
	// before StopSignal, to end the group through its own protocol (tmux
	// kill-server, playwright-cli close): contained itself (a run of its
	// own, nothing it starts is left), with Env, in Dir, bounded by the
	// grace. A group it empties gets no signal; whatever it does, the
	// stop protocol follows to its confirmed end. The receipt's
	// stop-exec step holds its exit code and output's tail.
	StopExec []string
	// UntilEmpty keeps the group after the main process exits, until it is
	// empty by itself, Stop, or the timeout: for commands that daemonize
	// and return at once (tmux new -d). By default the main process's exit
	// ends the run and stops what is left.
	UntilEmpty bool

	// Limits is the budget for the whole group, written before the command
	// starts: to the v2 leaf where the controllers are enabled for it, else
	// (hybrid hosts) to v1 leaves the command is born in.
	Limits limits.Spec
	// BestEffortLimits starts the command even when a limit cannot be
	// applied; the receipt lists what was not. By default that is an error.
	BestEffortLimits bool

	// Mechanism selects the containment: "" chooses cgroup when a writable
	// cgroup v2 parent exists and falls back otherwise (the receipt's
	// FallbackReason says why); MechanismCgroup refuses to start without
	// it; MechanismFallback forces the fallback.
	Mechanism receipt.Mechanism
	// CgroupParent is the cgroup v2 directory to create the leaf in. Empty
	// means a delegated parent found for the calling process (its own
	// cgroup, or a systemd scope). A given parent that cannot be used is
	// an error, never a silent fallback.
	CgroupParent string
	// AdoptOrphans declares that this program starts no children except
	// through contain, so that every orphan reparented to it belongs to
	// the group. Only the fallback mechanism uses it; without it the
	// fallback claims an orphan only if the orphan still carries the
	// group's marker in its environment.
	AdoptOrphans bool

	// StateDir, if set, is a state directory (as `tether` uses: see
	// DefaultStateDir) where the run keeps a record from before the
	// command is spawned until its stop is confirmed, so that `tether
	// reap` can stop what the run left if this program dies and its
	// watcher with it. Start fails with ErrRecord if the record cannot
	// be written.
	StateDir string
	// RunID names the run in its receipt, its record and the command's
	// environment (RunIDEnv, replacing an inherited one). Empty: Start
	// chooses one (receipt.NewRunID).
	RunID string

	// Progress, if set, is called with each step of the stop protocol as
	// it is recorded (term, grace, kill, ...), from the goroutine running
	// the protocol: for reports to a person while a stop takes its time.
	// It must not block.
	Progress func(receipt.Step)

	// Err is set by Command when the name could not be resolved; Start
	// returns it.
	Err error
	// ProcessState describes the main process once Wait has returned (nil
	// if it was never reaped), as in os/exec.
	ProcessState *os.ProcessState

	ctx             context.Context
	hooks           hooks.Hooks
	exe             *exeIdentity // the programs' identity, found from the start
	closeAfterStart []io.Closer
	closeAfterWait  []io.Closer
	track           *tracker
	storage         *storageWatch // nil: no storage ceilings
	// marker is the fallback group's marker (store.MarkerEnv: its
	// orphans are told from other children by it, and by reap its
	// members after tether's death), "" for a group the kernel holds.
	marker string

	mu       sync.Mutex // guards started, stopping, Grace after Start, rec and ctxErr
	started  bool
	stopping bool // the run's end is decided: the stop protocol runs or is about to
	ctxErr   error
	leaf     *cgroup.Leaf
	rec      receipt.Receipt
	chanOnce sync.Once
	stopCh   chan Reason
	skipCh   chan struct{}
	skipOnce sync.Once
	stopOnce sync.Once
	done     chan struct{}
	waitErr  error
	sys      sysState
}

func init() {
	hooks.Set = func(cmd any, h hooks.Hooks) { cmd.(*Cmd).hooks = h }
}

// Command returns a Cmd for name and args, resolving name like
// os/exec.Command. A resolution failure is kept in Err and returned by
// Start.
func Command(name string, arg ...string) *Cmd {
	c := &Cmd{Path: name, Args: append([]string{name}, arg...)}
	if lp, err := lookPath(name); err != nil {
		c.Err = err
	} else {
		c.Path = lp
	}
	return c
}

// CommandContext is like Command but tied to ctx: if ctx is done before
// the run ends, Cancel is called (by default, the stop protocol begins
// with reason ReasonContext). Start fails at once if ctx is already done.
func CommandContext(ctx context.Context, name string, arg ...string) *Cmd {
	if ctx == nil {
		panic("contain: nil Context")
	}
	c := Command(name, arg...)
	c.ctx = ctx
	c.Cancel = func() error {
		if c.Stopping() {
			return os.ErrProcessDone
		}
		c.BeginStop(ReasonContext)
		return nil
	}
	return c
}

// Start starts the command in a fresh containment. When it returns an
// error, nothing is left running and the receipt records the error.
func (c *Cmd) Start() error {
	err := c.preStart()
	if err == nil {
		err = c.start()
	}
	closeAll(c.closeAfterStart)
	if err != nil {
		closeAll(c.closeAfterWait)
		return err
	}
	if c.ctx != nil {
		go c.watchCtx()
	}
	return nil
}

// preStart refuses what os/exec refuses before anything is created.
func (c *Cmd) preStart() error {
	if c.Cancel != nil && c.ctx == nil {
		return errors.New("contain: Cancel set on a Cmd not created with CommandContext")
	}
	if c.ctx != nil {
		if err := c.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// watchCtx calls Cancel when the context is done before the run ended,
// and with WaitDelay, kills the group if the run has not ended after it.
func (c *Cmd) watchCtx() {
	select {
	case <-c.done:
		return
	case <-c.ctx.Done():
	}
	err := c.ctx.Err()
	if cerr := c.Cancel(); errors.Is(cerr, os.ErrProcessDone) {
		err = nil
	} else if cerr != nil {
		err = errors.Join(errors.New("contain: canceling Cmd"), cerr)
	}
	c.mu.Lock()
	c.ctxErr = err
	c.mu.Unlock()
	if c.WaitDelay <= 0 {
		return
	}
	t := time.NewTimer(c.WaitDelay)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		c.Kill()
	}
}

// Wait waits for the main process to exit, then runs the stop protocol on
// whatever is left, and returns once the group is confirmed empty and
// reaped. The error is an *ExitError when the main process did not exit 0
// (or the run timed out), the context's error when Cancel ended a run
// whose main process then succeeded, and wraps ErrNotConfirmed when the
// stop could not be proven.
func (c *Cmd) Wait() error {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if !started {
		return ErrNotStarted
	}
	<-c.done
	closeAll(c.closeAfterWait)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ProcessState = c.sys.processState()
	if c.waitErr == nil && c.ctxErr != nil {
		return c.ctxErr
	}
	return c.waitErr
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Stop begins the stop protocol (reason ReasonRequest) and waits for it to
// end: nil when the group is confirmed empty, an error wrapping
// ErrNotConfirmed when it is not, ctx's error when ctx is done first (the
// protocol goes on; Wait still returns the run's result). The main
// process's exit status is Wait's to report. Use Kill to skip the grace.
func (c *Cmd) Stop(ctx context.Context) error {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if !started {
		return ErrNotStarted
	}
	c.BeginStop(ReasonRequest)
	select {
	case <-c.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.rec.StopConfirmed {
		return &notConfirmed{why: unconfirmedWhy(&c.rec)}
	}
	return nil
}

// BeginStop begins the stop protocol now without waiting for it,
// recording reason in the receipt. Later calls (and Stop) do nothing but
// wait; use Kill to cut the grace short.
//
// A BeginStop before Start is kept: the protocol begins as soon as the
// command has started, so a signal that arrives during Start is never
// lost.
func (c *Cmd) BeginStop(reason Reason) {
	c.chans()
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopping = true
		c.mu.Unlock()
		c.stopCh <- reason
	})
}

// Stopping reports whether the run's end is decided (the main process
// exited, the timeout expired, or a stop began): the stop protocol runs or
// is about to.
func (c *Cmd) Stopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// SetGrace changes the grace period, also of a stop already under way:
// its grace wait then ends at its own start plus d, at once if that has
// passed (NoGrace: no grace). Unlike writing Grace, it is safe while the
// command runs.
func (c *Cmd) SetGrace(d time.Duration) {
	c.mu.Lock()
	c.Grace = d
	c.mu.Unlock()
}

// Kill skips what is left of the grace period: the group is killed at once.
// It also begins the protocol (reason ReasonRequest) if it had not begun.
// It does not wait; Wait does.
func (c *Cmd) Kill() {
	c.chans()
	c.skipOnce.Do(func() { close(c.skipCh) })
	c.BeginStop(ReasonRequest)
}

// chans makes the channels that Stop, Kill and Wait use, once.
func (c *Cmd) chans() {
	c.chanOnce.Do(func() {
		c.stopCh = make(chan Reason, 1)
		c.skipCh = make(chan struct{})
		c.done = make(chan struct{})
	})
}

// Pid returns the main process's pid once Start has succeeded, else 0.
// Prefer Signal to sending signals by pid: a pid is reused once the
// process is reaped.
func (c *Cmd) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rec.Main == nil {
		return 0
	}
	return c.rec.Main.PID
}

// Receipt returns the run's receipt. It is complete after Wait returns, or
// after Start fails; before that it shows the run so far.
func (c *Cmd) Receipt() *receipt.Receipt {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rec
	return &r
}

// ExitCode returns the code tether passes on: the main process's exit
// status, 128+n when it died of signal n, 124 when the run timed out, 125
// before the run ended or when it failed to start (126/127: the command
// could not be executed / was not found).
func (c *Cmd) ExitCode() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rec.Exit.Code
}

func closeAll(cs []io.Closer) {
	for _, c := range cs {
		c.Close()
	}
}
