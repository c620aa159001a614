package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/registry"
)

// DefaultReadyWait bounds the wait for Options.Ready when
// Options.ReadyTimeout is 0.
const DefaultReadyWait = time.Minute

// ErrNotReady is wrapped by the error of a start whose readiness checks
// did not all hold in time, or whose session ended first: the session was
// stopped (a *NotReadyError says why, with the log's last lines).
var ErrNotReady = errors.New("session: not ready")

// NotReadyError is a start whose readiness checks failed.
type NotReadyError struct {
	Name string
	// Why names the checks that did not hold and what ended the wait.
	Why string
	// Stopped says the session was running and was stopped; false when
	// it had ended by itself.
	Stopped bool
	// LogTail is the session's log's last lines (at most readyTailLines).
	LogTail []string
}

func (e *NotReadyError) Error() string {
	s := fmt.Sprintf("session %q: %s", e.Name, e.Why)
	if e.Stopped {
		s += "; it was stopped"
	}
	return s
}

func (e *NotReadyError) Unwrap() error { return ErrNotReady }

// readyTailLines is how many of the log's last lines a NotReadyError
// carries.
const readyTailLines = 20

// A readiness check, as --ready takes it: KIND:ARG.
type check struct {
	spec string // as given
	kind string // tcp, unix, file, log, exec
	arg  string
	re   *regexp.Regexp // log
	last string         // what its latest try saw, when it failed
}

// readyKinds are the kinds of readiness check, as --ready takes them.
var readyKinds = []string{"tcp", "unix", "file", "log", "exec"}

// parseCheck parses one readiness check: tcp:[HOST:]PORT, unix:PATH,
// file:PATH, log:REGEX or exec:CMD.
func parseCheck(spec string) (*check, error) {
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" || !slices.Contains(readyKinds, kind) {
		return nil, sessionctl.BadOption("--ready %q: want tcp:[HOST:]PORT, unix:PATH, file:PATH, log:REGEX or exec:CMD", spec)
	}
	c := &check{spec: spec, kind: kind, arg: arg}
	switch kind {
	case "tcp":
		host, port, err := net.SplitHostPort(arg)
		if err != nil {
			host, port = "localhost", arg
		}
		if _, err := net.LookupPort("tcp", port); err != nil || port == "" {
			return nil, sessionctl.BadOption("--ready %q: %q is not a port", spec, port)
		}
		c.arg = net.JoinHostPort(host, port)
	case "log":
		re, err := regexp.Compile(arg)
		if err != nil {
			return nil, sessionctl.BadOption("--ready %q: %v", spec, err)
		}
		c.re = re
	}
	return c, nil
}

// ParseReady checks readiness check specs without starting anything, for
// a caller that validates its input first.
func ParseReady(specs []string) error {
	for _, s := range specs {
		if _, err := parseCheck(s); err != nil {
			return err
		}
	}
	return nil
}

// readiness is one start's wait for its checks.
type readiness struct {
	c      *Client
	rec    *registry.Record
	o      Options
	env    map[string]string // the session's environment, for $VAR in paths
	checks []*check
	logHit atomic.Bool
}

// readySpecs are the checks a start of o waits for: o.Ready, and for the
// tmux profile a session's existence unless an exec check is given.
func readySpecs(o Options) []string {
	specs := o.Ready
	if o.Profile == "tmux" && !slices.ContainsFunc(specs, func(s string) bool { return strings.HasPrefix(s, "exec:") }) {
		// The tmux server holds a session: `tmux new -d` returns before
		// it does (the start help's example failed about one time in
		// ten), and `tmux ls` is no proof: it exits 0, listing nothing,
		// while the server is up without the session yet (seen once in
		// TestStartTmuxReadyBackToBack). has-session fails then.
		specs = append(slices.Clone(specs), "exec:tmux has-session")
	}
	return specs
}

// awaitReady waits until every check of specs (readySpecs(o)) holds
// (polled with a backoff from 20 ms to 250 ms), the session ends, or the
// wait is over. On failure it stops the session and returns a
// *NotReadyError.
func (c *Client) awaitReady(ctx context.Context, rec *registry.Record, o Options, specs []string) error {
	r := &readiness{c: c, rec: rec, o: o, env: map[string]string{}}
	for _, s := range specs {
		ch, err := parseCheck(s)
		if err != nil {
			return err
		}
		r.checks = append(r.checks, ch)
	}
	for _, kv := range append(slices.Clone(o.Env), recordEnv(c.reg, rec)...) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			r.env[k] = v
		}
	}
	wait := o.ReadyTimeout
	if wait <= 0 {
		wait = DefaultReadyWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if slices.ContainsFunc(r.checks, func(ch *check) bool { return ch.kind == "log" }) {
		go r.watchLog(ctx)
	}
	why := r.poll(ctx, wait)
	if why == "" {
		return nil
	}
	// Not ready: stop what was started, then read what it said.
	nr := &NotReadyError{Name: rec.Name, Why: why}
	if r.ended() == "" {
		stopCtx, stopCancel := context.WithTimeout(context.Background(), time.Minute)
		defer stopCancel()
		_, err := c.Stop(stopCtx, rec.Name, StopOptions{reason: "not-ready"})
		nr.Stopped = err == nil
		if err != nil && !errors.Is(err, ErrEnded) {
			nr.Why += fmt.Sprintf("; stopping it: %v", err)
		}
	}
	nr.LogTail = r.logTail()
	return nr
}

// poll tries the checks until all hold (""), or returns why the wait
// ended without.
func (r *readiness) poll(ctx context.Context, wait time.Duration) string {
	delay := 20 * time.Millisecond
	for {
		failing := r.failing(ctx)
		if len(failing) == 0 {
			return ""
		}
		if st := r.ended(); st != "" {
			if st == beganToStop {
				// Its own stop is under way (its main process exited):
				// how it ended is worth the wait.
				wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				r.c.Wait(wctx, r.rec.Name)
				cancel()
				st = r.ended()
			}
			return fmt.Sprintf("it %s before it was ready: %s", st, describeChecks(failing))
		}
		select {
		case <-ctx.Done():
			if r.lastLook(failing) {
				return ""
			}
			return fmt.Sprintf("not ready after %s: %s", wait, describeChecks(failing))
		case <-time.After(delay):
		}
		delay = min(delay*3/2, 250*time.Millisecond)
	}
}

// describeChecks names the checks that do not hold and what each last saw.
func describeChecks(failing []*check) string {
	var parts []string
	for _, ch := range failing {
		s := ch.spec
		if ch.last != "" {
			s += " (" + ch.last + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// failing tries every check once and returns those that do not hold.
func (r *readiness) failing(ctx context.Context) []*check {
	var out []*check
	for _, ch := range r.checks {
		if err := r.try(ctx, ch); err != nil {
			// A try the wait's own end cut short says nothing of the
			// check ("i/o timeout"): what an earlier try saw stands.
			if ctx.Err() == nil || ch.last == "" {
				ch.last = err.Error()
			}
			out = append(out, ch)
		}
	}
	return out
}

// beganToStop is what ended says of a session whose stop is under way.
const beganToStop = "began to stop"

// ended says how the session ended ("ended (stopped, main-exit, exit
// 3)", "began to stop"), or "" while it runs.
func (r *readiness) ended() string {
	rec, err := r.c.reg.Read(r.rec.Name)
	switch {
	case err != nil:
		return "could not be read (" + err.Error() + ")"
	case rec.State == registry.StateStopping:
		return beganToStop
	case rec.Live():
		return ""
	}
	s := "ended (" + rec.State
	if rec.StopReason != "" {
		s += ", " + rec.StopReason
	}
	if rec.Exit != nil && rec.Exit.Signal != "" {
		s += ", " + rec.Exit.Signal
	} else if rec.Exit != nil {
		s += fmt.Sprintf(", exit %d", rec.Exit.Code)
	}
	return s + ")"
}

// try runs one check once.
func (r *readiness) try(ctx context.Context, ch *check) error {
	switch ch.kind {
	case "tcp":
		c, err := (&net.Dialer{Timeout: 250 * time.Millisecond}).DialContext(ctx, "tcp", ch.arg)
		if err != nil {
			return errors.Unwrap(err)
		}
		return c.Close()
	case "unix":
		c, err := (&net.Dialer{Timeout: 250 * time.Millisecond}).DialContext(ctx, "unix", r.path(ch.arg))
		if err != nil {
			return errors.Unwrap(err)
		}
		return c.Close()
	case "file":
		_, err := os.Stat(r.path(ch.arg))
		return errors.Unwrap(err)
	case "log":
		if r.logHit.Load() {
			return nil
		}
		return errors.New("no line of the log matched yet")
	case "exec":
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		ex, err := r.c.Exec(ectx, r.rec.Name, ExecOptions{Argv: []string{"sh", "-c", ch.arg}, Env: r.o.Env, Dir: r.o.Dir})
		switch {
		case err != nil:
			return err
		case ex.Code != 0:
			return fmt.Errorf("exit %d", ex.Code)
		}
		return nil
	}
	return fmt.Errorf("unknown check %q", ch.kind)
}

// path is p with $VAR and ${VAR} taken from the session's environment
// ($TETHER_SESSION_DIR, $TMPDIR), relative to the session's working
// directory.
func (r *readiness) path(p string) string {
	p = os.Expand(p, func(k string) string { return r.env[k] })
	if !filepath.IsAbs(p) {
		p = filepath.Join(r.o.Dir, p)
	}
	return p
}

// watchLog follows the session's log until a line matches every log
// check's expression, or ctx is done.
func (r *readiness) watchLog(ctx context.Context) { r.scanLog(ctx, true) }

// lastLook reads the whole log once more when the wait is over and only
// log checks are failing: a line written in the last moments (between
// two tries, or before the follower read it) counts, rather than the
// start failing with "no line matched" above a log tail that shows it.
func (r *readiness) lastLook(failing []*check) bool {
	if slices.ContainsFunc(failing, func(ch *check) bool { return ch.kind != "log" }) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.scanLog(ctx, false)
}

// scanLog reads the session's log from its start (with follow, on as it
// grows, until ctx is done) and reports whether every log check matched
// a line of it, setting logHit then.
func (r *readiness) scanLog(ctx context.Context, follow bool) bool {
	pr, pw := io.Pipe()
	go func() {
		err := r.c.Logs(ctx, r.rec.Name, pw, LogOptions{Follow: follow, Tail: -1})
		pw.CloseWithError(err)
	}()
	defer pr.Close()
	var res []*regexp.Regexp
	for _, ch := range r.checks {
		if ch.kind == "log" {
			res = append(res, ch.re)
		}
	}
	matched := make([]bool, len(res))
	sc := bufio.NewScanner(pr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		all := true
		for i, re := range res {
			matched[i] = matched[i] || re.Match(sc.Bytes())
			all = all && matched[i]
		}
		if all {
			r.logHit.Store(true)
			return true
		}
	}
	return false
}

// logTail is the log's last lines, for a person told why a start failed.
func (r *readiness) logTail() []string {
	var b strings.Builder
	if err := r.c.Logs(context.Background(), r.rec.Name, &b, LogOptions{Tail: readyTailLines}); err != nil {
		return nil
	}
	s := strings.TrimRight(b.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
