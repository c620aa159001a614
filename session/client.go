package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/internal/supervisor"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// ErrNoSupervisor is returned by Client.Start when no program is known to
// run the session's supervisor (see Client.Supervisor).
var ErrNoSupervisor = errors.New("session: no supervisor program: call session.MaybeSupervise first thing in main, install tether on PATH, or set Client.Supervisor")

// Client starts and controls the sessions recorded in one registry. Its
// methods may be called from several goroutines, and from several
// programs at once: the registry is the only shared state.
type Client struct {
	reg *store.Registry // where the sessions are recorded
	// Supervisor is the program each session's supervisor runs as: a
	// program that calls MaybeSupervise before anything else (the tether
	// binary does). Empty: this program, if it called MaybeSupervise;
	// else "tether" on PATH.
	Supervisor string
}

// Open returns a Client of the state directory dir, created if needed;
// dir "" is the one the tether command uses (contain.DefaultStateDir).
func Open(dir string) (*Client, error) {
	if dir == "" {
		d, err := store.DefaultDir(os.Getenv)
		if err != nil {
			return nil, err
		}
		dir = d
	}
	reg, err := store.Open(dir)
	if err != nil {
		return nil, err
	}
	return &Client{reg: reg}, nil
}

// Close releases the state directory's handles the Client holds. The
// sessions it started run on.
func (c *Client) Close() error { return c.reg.Close() }

// selfSupervises records that this program called MaybeSupervise.
var selfSupervises atomic.Bool

func (c *Client) supervisor() (string, error) {
	switch {
	case c.Supervisor != "":
		return c.Supervisor, nil
	case selfSupervises.Load():
		return os.Executable()
	}
	if p, err := exec.LookPath("tether"); err == nil {
		return p, nil
	}
	return "", ErrNoSupervisor
}

// Start starts a session and returns its record once the command runs
// and its readiness checks (Options.Ready) hold, or the reason it could
// not start (a *StartError with tether run's exit code; a *NotReadyError,
// with the record of the session it stopped). If ctx is done before the supervisor reports, the supervisor is
// killed and nothing is left; without a deadline the wait is bounded by
// DefaultReadyTimeout.
func (c *Client) Start(ctx context.Context, o Options) (*registry.Record, error) {
	exe, err := c.supervisor()
	if err != nil {
		return nil, err
	}
	if err := ParseReady(o.Ready); err != nil {
		return nil, err
	}
	rec, err := start(ctx, c.reg, exe, o)
	if err != nil {
		return nil, err
	}
	specs := readySpecs(o)
	if len(specs) == 0 {
		return rec, nil // start read it after the supervisor's report
	}
	if err := c.awaitReady(ctx, rec, o, specs); err != nil {
		return rec, err
	}
	return c.reg.Read(rec.Name)
}

// StopOptions say how to stop sessions.
type StopOptions struct {
	// Grace is how long members have after the stop signal before they
	// are killed: 0 the session's own (its start's Grace), contain.NoGrace none.
	// A stop already under way keeps its grace unless Kill.
	Grace time.Duration
	// Kill kills the members at once, also of a stop already under way.
	Kill bool
	// KillOn, once closed, escalates the stops not yet ended to Kill (a
	// second ^C). Nil never fires.
	KillOn <-chan struct{}
	// Progress, if set, is called with each step of each supervisor's
	// stop protocol as the supervisor records it. It must not block.
	Progress func(name string, step receipt.Step)
	// reason is the stop reason the record keeps ("" : request).
	reason string
}

// Stop stops the session and returns its stop receipt once the stop is
// confirmed. A stop already under way is joined. Sessions it owns are
// stopped first, by its supervisor. If ctx is done first, Stop returns an
// error wrapping ErrStillStopping: the supervisor goes on with the stop.
func (c *Client) Stop(ctx context.Context, name string, o StopOptions) (*receipt.Receipt, error) {
	r := c.StopMany(ctx, []string{name}, o)[0]
	return r.Receipt, r.Err
}

// StopMany stops the named sessions together: every supervisor is asked
// first, then all are waited for, so n sessions take as long as the
// slowest, not the sum. Every session is attempted even when one fails.
func (c *Client) StopMany(ctx context.Context, names []string, o StopOptions) []StopResult {
	req := sessionctl.StopRequest{Reason: cmp.Or(o.reason, "request"), GraceMS: o.Grace.Milliseconds(), Kill: o.Kill}
	if o.Grace < 0 {
		req.GraceMS = -1
	}
	wait := 100 * 365 * 24 * time.Hour
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	rs := sessionctl.StopMany(c.reg, names, req, wait, o.KillOn, ctx.Done(), o.Progress)
	out := make([]StopResult, len(rs))
	for i, r := range rs {
		out[i] = StopResult(r)
	}
	return out
}

// StopResult is how the stop of one session ended.
type StopResult struct {
	Name    string
	Receipt *receipt.Receipt
	Err     error
}

// Wait waits until the session has ended and returns its record; ctx
// bounds the wait (its error is returned with the record as last read).
func (c *Client) Wait(ctx context.Context, name string) (*registry.Record, error) {
	return sessionctl.WaitEnd(ctx, c.reg, name)
}

// ExecOptions describe a command to run in a session.
type ExecOptions struct {
	Argv []string // the command
	// Env is the command's environment before the session's own variables
	// are set over it (nil: os.Environ()).
	Env []string
	// Set holds KEY=VALUE pairs set over the session's own variables
	// (tether exec -e): the caller's explicit values win.
	Set []string
	Dir string // working directory (empty: the caller's)
	// Terminal: Stdin is a terminal (a pty's replica, which Stdout and
	// Stderr usually are too) that the command takes as its controlling
	// terminal, as `docker exec -t` gives one; the caller relays it. Unix
	// only.
	Terminal bool
	// Stdin, Stdout and Stderr are handed to the command (nil: /dev/null).
	Stdin, Stdout, Stderr *os.File
	// Signals, if set, are forwarded to the command.
	Signals <-chan os.Signal
}

// Exec runs a command inside the running session, as `docker exec` does:
// cloned into the session's group by its supervisor, so that what it
// starts belongs to the session. It returns how the command exited; the
// session goes on. If ctx is done first, the command (not what it
// started: that is the session's) is killed.
func (c *Client) Exec(ctx context.Context, name string, o ExecOptions) (receipt.Exit, error) {
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Dir == "" {
		d, err := os.Getwd()
		if err != nil {
			return receipt.Exit{Code: 125, MainStatus: -1}, err
		}
		o.Dir = d
	}
	var stdio [3]*os.File
	for i, f := range []*os.File{o.Stdin, o.Stdout, o.Stderr} {
		if f == nil {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return receipt.Exit{Code: 125, MainStatus: -1}, err
			}
			defer null.Close()
			f = null
		}
		stdio[i] = f
	}
	sigs := o.Signals
	if ctx.Done() != nil {
		// One forwarder: the caller's signals, then SIGKILL once ctx is
		// done (a nil o.Signals never delivers).
		merged, done := make(chan os.Signal, 1), make(chan struct{})
		defer close(done)
		go func() {
			for {
				select {
				case s := <-o.Signals:
					select {
					case merged <- s:
					case <-done:
						return
					}
				case <-ctx.Done():
					select {
					case merged <- syscall.SIGKILL:
					case <-done:
					}
					return
				case <-done:
					return
				}
			}
		}()
		sigs = merged
	}
	return execIn(c.reg, name, o, stdio, sigs)
}

// Logs writes the session's log to w (see LogOptions); with Follow it
// goes on until the session ends or ctx is done.
func (c *Client) Logs(ctx context.Context, name string, w io.Writer, o LogOptions) error {
	return logs(ctx, c.reg, name, w, o)
}

// Status returns what is true of the session now, its members included.
func (c *Client) Status(name string) (Status, error) {
	rec, err := c.reg.Read(name)
	if err != nil {
		return Status{}, err
	}
	return statusWithProcesses(rec), nil
}

// List returns the status of every recorded session, live and ended, and
// the errors of records that could not be read.
func (c *Client) List() ([]Status, []error) {
	recs, errs := c.reg.List()
	var sessions []*registry.Record
	for _, r := range recs {
		if r.Kind != "run" {
			sessions = append(sessions, r)
		}
	}
	return StatusOfAll(sessions), errs
}

// Env returns the session's own environment variables (TETHER_SESSION,
// TMPDIR, its profile's, ...), as sorted KEY=VALUE pairs, for a command
// started outside it that must reach it. An ended session's is gone
// (ErrEnded).
func (c *Client) Env(name string) ([]string, error) {
	rec, err := c.reg.Read(name)
	if err != nil {
		return nil, err
	}
	if !rec.Live() {
		return nil, registry.Errorf(rec.Name, ErrEnded, "has ended (%s): its environment is gone", rec.State)
	}
	return recordEnv(c.reg, rec), nil
}

// Family returns the live sessions the named one owns, directly or
// through others, children before parents.
func (c *Client) Family(name string) ([]*registry.Record, error) {
	rec, err := c.reg.Read(name)
	if err != nil {
		return nil, err
	}
	if rec.Supervisor == "" {
		return nil, nil
	}
	return sessionctl.Family(c.reg, rec.Supervisor), nil
}

// MaybeSupervise runs this process as a session's supervisor and exits,
// if it was started as one by Client.Start; otherwise it returns at once,
// having noted that this program can supervise (Client.Supervisor may
// then be left empty). A program that starts sessions calls it first
// thing in main, before it parses flags or starts goroutines, as the
// tether command does:
//
//	func main() {
//		session.MaybeSupervise()
//		// the program itself
//	}
func MaybeSupervise() {
	selfSupervises.Store(true)
	if len(os.Args) < 2 || os.Args[1] != supervisor.SuperviseArg {
		return
	}
	if err := supervisor.Main(os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "tether: supervisor: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}
