// Package contain runs a command so that everything it starts can be found
// and stopped: the command is cloned straight into a fresh cgroup v2 leaf
// (no instant exists in which it is outside), the calling process becomes
// the child subreaper so orphans come back to it, and Wait returns only when
// the kernel has confirmed the group empty and every member was reaped.
//
// The API is shaped like os/exec:
//
//	c := contain.Command("npm", "run", "e2e")
//	c.Timeout = 20 * time.Minute
//	if err := c.Start(); err != nil { ... }
//	err := c.Wait()          // main exit, then the stop protocol
//	r := c.Receipt()         // evidence, JSON-ready
//
// Stop begins the stop protocol early (SIGTERM, grace, cgroup.kill); Kill
// skips whatever grace is left.
//
// Process-wide effects: Start makes the calling process a child subreaper
// (PR_SET_CHILD_SUBREAPER) and reaps the orphans of its groups. It never
// reaps a child it did not recognise as a member, so os/exec children of the
// rest of the program keep their exit statuses.
package contain

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

var (
	// ErrStarted is returned by Start when the Cmd was already started.
	ErrStarted = errors.New("contain: already started")
	// ErrNotStarted is returned by Wait before Start.
	ErrNotStarted = errors.New("contain: not started")
	// ErrNoCgroup is returned by Start when Mechanism is MechanismCgroup and
	// no writable cgroup v2 parent exists. Nothing was started.
	ErrNoCgroup = errors.New("contain: cgroup containment required but not available")
	// ErrNotConfirmed is returned by Wait when the stop protocol ended
	// without proof that the group is empty and reaped; the receipt says
	// what is missing.
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
)

// Stop reasons recorded in the receipt.
const (
	ReasonMainExit = "main-exit"
	ReasonTimeout  = "timeout"
	ReasonSignal   = "signal"
	ReasonRequest  = "request"
	ReasonError    = "error"
	// ReasonEmpty: with UntilEmpty, the group emptied by itself.
	ReasonEmpty = "empty"
	// ReasonStartFailed: nothing ran (the receipt's error says why).
	ReasonStartFailed = "start-failed"
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

// Cmd is a command run inside its own containment.
type Cmd struct {
	// Path, Args, Env, Dir, Stdin, Stdout and Stderr mean what they mean in
	// os/exec.Cmd. Args includes the command name.
	Path   string
	Args   []string
	Env    []string
	Dir    string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer

	// RunID names the run in its receipt and in the command's environment
	// (RunIDEnv, replacing an inherited one: it names the innermost run).
	// Empty: Start chooses a new one (receipt.NewRunID). A caller that
	// records the run elsewhere before Start sets it to use the same id.
	RunID string

	// Mechanism selects the containment: "" chooses cgroup when a writable
	// cgroup v2 parent exists and falls back otherwise; MechanismCgroup
	// refuses to start without it; MechanismFallback forces the fallback.
	Mechanism receipt.Mechanism
	// CgroupParent is the cgroup v2 directory to create the leaf in. Empty
	// means the calling process's own cgroup. A given parent that cannot be
	// used is an error, never a silent fallback.
	CgroupParent string
	// Timeout, if positive, begins the stop protocol after this long.
	Timeout time.Duration
	// Grace is how long members have after SIGTERM (default DefaultGrace;
	// negative means none). Set it before Start; afterwards use SetGrace.
	Grace time.Duration
	// KillWait bounds the wait for emptiness after the kill (default
	// DefaultKillWait).
	KillWait time.Duration
	// StopSignal is the first signal of the stop protocol, sent to every
	// member before the grace (0: SIGTERM), as timeout -s and systemd's
	// KillSignal= choose it. The receipt records it (Stop.Signal).
	StopSignal syscall.Signal
	// Limits is the budget for the whole group, written before the command
	// starts: to the v2 leaf where the controllers are enabled for it, else
	// (hybrid hosts) to v1 leaves the command is born in.
	Limits limits.Spec
	// BestEffortLimits starts the command even when a limit cannot be
	// applied; the receipt lists what was not. By default that is an error.
	BestEffortLimits bool
	// UntilEmpty keeps the group after the main process exits, until it is
	// empty by itself, Stop, or the timeout: for commands that daemonize
	// and return at once (tmux new -d). By default the main process's exit
	// ends the run and stops what is left.
	UntilEmpty bool
	// Prepared, if set, is called once the containment exists (leaf
	// created, limits written) and before the command is spawned, with the
	// receipt so far; an error aborts the start. Records written here
	// survive a crash at any later point.
	Prepared func(r *receipt.Receipt) error
	// Started, if set, is called once the command runs and is identified.
	Started func(r *receipt.Receipt)
	// BeforeStop, if set, is called with the reason once the run's end is
	// decided and before the stop protocol touches the group (a session
	// supervisor stops the sessions it owns there first).
	BeforeStop func(reason string)
	// Progress, if set, is called with each step of the stop protocol as
	// it is recorded (term, grace, kill, ...), from the goroutine running
	// the protocol: for reports to a person while a stop takes its time.
	// It must not block.
	Progress func(receipt.Step)
	// AdoptOrphans declares that this program starts no children except
	// through this Cmd, so every orphan reparented to it belongs to the
	// group. Only the fallback mechanism needs it; without it the fallback
	// claims an orphan only if the orphan still carries the group's marker
	// in its environment.
	AdoptOrphans bool

	// Process is the main process, set by Start.
	Process *os.Process
	// Err is set by Command when the name could not be resolved.
	Err error
	// Warning says why the fallback is in force when it was chosen
	// automatically; empty otherwise.
	Warning string

	mu       sync.Mutex // guards started, stopping, Grace after Start, and rec
	started  bool
	stopping bool // the run's end is decided: the stop protocol runs or is about to
	leaf     *cgroup.Leaf
	rec      receipt.Receipt
	chanOnce sync.Once
	stopCh   chan string
	skipCh   chan struct{}
	skipOnce sync.Once
	stopOnce sync.Once
	done     chan struct{}
	waitErr  error
	sys      sysState
}

// Command returns a Cmd for name and args, resolving name like
// os/exec.Command. A resolution failure is kept in Err and returned by
// Start.
func Command(name string, arg ...string) *Cmd {
	c := &Cmd{Path: name, Args: append([]string{name}, arg...)}
	if lp, err := exec.LookPath(name); err != nil {
		c.Err = err
	} else {
		c.Path = lp
	}
	return c
}

// Start starts the command in a fresh containment. When it returns an
// error, nothing is left running and the receipt records the error.
func (c *Cmd) Start() error { return c.start() }

// Wait waits for the main process to exit, then runs the stop protocol on
// whatever is left, and returns once the group is confirmed empty and
// reaped. The error is an *exec.ExitError-like *ExitError when the main
// process failed, or wraps ErrNotConfirmed.
func (c *Cmd) Wait() error {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if !started {
		return ErrNotStarted
	}
	<-c.done
	return c.waitErr
}

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Stop begins the stop protocol now, recording reason (ReasonTimeout,
// ReasonSignal, ReasonRequest, ...). Later calls do nothing; use Kill to
// cut the grace short.
//
// A Stop before Start is kept: the protocol begins as soon as the command
// has started, so a signal that arrives during Start is never lost.
func (c *Cmd) Stop(reason string) {
	c.chans()
	c.stopOnce.Do(func() {
		c.mu.Lock()
		c.stopping = true
		c.mu.Unlock()
		c.stopCh <- reason
	})
}

// Stopping reports whether the run's end is decided (the main process
// exited, the timeout expired, or Stop was called): the stop protocol runs
// or is about to.
func (c *Cmd) Stopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// SetGrace changes the grace period, also of a stop already under way:
// its grace wait then ends at its own start plus d, at once if that has
// passed (negative d: no grace). Unlike writing Grace, it is safe while the
// command runs.
func (c *Cmd) SetGrace(d time.Duration) {
	c.mu.Lock()
	c.Grace = d
	c.mu.Unlock()
}

// Kill skips what is left of the grace period: the group is killed at once.
// It also begins the protocol if it had not begun.
func (c *Cmd) Kill() {
	c.chans()
	c.skipOnce.Do(func() { close(c.skipCh) })
	c.Stop(ReasonRequest)
}

// KillRequested returns a channel that is closed once Kill is called: work
// done before the stop protocol (BeforeStop) can cut itself short too.
func (c *Cmd) KillRequested() <-chan struct{} {
	c.chans()
	return c.skipCh
}

// chans makes the channels that Stop, Kill and Wait use, once.
func (c *Cmd) chans() {
	c.chanOnce.Do(func() {
		c.stopCh = make(chan string, 1)
		c.skipCh = make(chan struct{})
		c.done = make(chan struct{})
	})
}

// Receipt returns the run's receipt. It is complete after Wait returns, or
// after Start fails.
func (c *Cmd) Receipt() *receipt.Receipt {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rec
	return &r
}

// ExitCode returns the code tether passes on: the main process's exit
// status, 128+n when it died of signal n, 124 when the run timed out.
func (c *Cmd) ExitCode() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rec.Exit.Code
}

// ExitError reports a main process that did not exit 0.
type ExitError struct {
	Code   int    // the code tether passes on
	Signal string // set when the main process died of a signal
}

func (e *ExitError) Error() string {
	if e.Signal != "" {
		return "contain: main process killed by " + e.Signal
	}
	return "contain: main process exited with status " + strconv.Itoa(e.Code)
}
