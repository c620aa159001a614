//go:build linux || windows || darwin

package supervisor

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/sessionlog"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// supervise runs session name of the registry at stateDir: it is the body
// of the hidden `tether __supervise` command. ready receives one ReadyReport
// line once the command runs or could not start. It returns when the
// session has ended.
//
// The client starts it before it claims the name (handoff.go): what
// needs no record is done first, beside the claim, and the record is
// read once the client's go comes. A hand-off closed without it
// ends the supervisor at once (errAbandoned), having removed what it made.
// A failure before the go is reported, and recorded, after it, as it
// would have been had the step come after.
func supervise(stateDir, name string, ready, in *os.File) error {
	detachFromCaller(ready)
	s := &supervisor{name: name, ready: ready}
	defer s.report(sessionctl.ReadyReport{Error: "supervisor ended without starting the session", Code: 125})
	defer s.close()
	h := &handoff{r: bufio.NewReader(in)}
	reg, sigs, err := s.begin(stateDir)
	var prepErr error
	if err == nil {
		prepErr = s.prepare(reg, h)
	}
	if !h.awaitGo() {
		s.ready = nil // nobody reads a report
		if reg != nil {
			s.discard(reg)
		}
		return errAbandoned
	}
	if err == nil {
		var rec *registry.Record
		if rec, err = reg.Read(name); err == nil {
			s.w = &recorder{reg: reg, rec: rec}
		}
	}
	if err != nil {
		s.report(sessionctl.ReadyReport{Error: err.Error(), Code: 125})
		return err
	}
	if prepErr == nil && s.spec.RunID != s.w.rec.RunID {
		prepErr = fmt.Errorf("session %q: the hand-off's spec is of run %s, its record of %s", name, s.spec.RunID, s.w.rec.RunID)
	}
	if prepErr != nil {
		s.endCapture()
		return fail(s.w, s.report, prepErr, 125, true)
	}
	c := s.command()
	if err := s.start(c); err != nil {
		return err
	}
	return s.serve(c, sigs)
}

// begin opens the state dir, takes the supervisor's own token and the
// signals of stop requests. In series: on goroutines of their own, beside
// each other or beside the spec, they were no faster (BENCHMARKS.md,
// issue 30's third round).
func (s *supervisor) begin(stateDir string) (reg *store.Registry, sigs chan os.Signal, err error) {
	if reg, err = store.Open(stateDir); err != nil {
		return nil, nil, err
	}
	if s.self, err = selfToken(); err != nil {
		return nil, nil, err
	}
	sigs, err = sessionctl.StopRequests(s.self)
	return reg, sigs, err
}

// supervisor is one session's supervisor, from its record to its end.
type supervisor struct {
	name  string
	ready *os.File // the pipe of the one ReadyReport; nil once sent
	w     *recorder
	spec  *sessionctl.Spec
	owner *identity.Handle // nil: no owner
	self  string           // the supervisor's token
	log   *sessionlog.Log
	capt  *sessionlog.Capture
	// The command gets the capture pipes' write ends; the supervisor's
	// copies go once it started (started), so that the capture sees EOF
	// when the session's last writer is gone.
	stdout, stderr *os.File
	closeProgress  func() // the file the stop's steps are written to as they happen
}

// report sends the one ReadyReport; later calls do nothing.
func (s *supervisor) report(r sessionctl.ReadyReport) {
	if s.ready != nil {
		json.NewEncoder(s.ready).Encode(r)
		s.ready.Close()
		s.ready = nil
	}
}

// prepare reads the spec from the hand-off and makes what the session
// needs before its command runs: the supervisor's scope (enterScope), its
// owner (which must still live), its log and the capture into it. It
// needs no record, so it runs before the client's go.
func (s *supervisor) prepare(reg *store.Registry, h *handoff) (err error) {
	name := s.name
	if s.spec, err = h.spec(name); err != nil {
		return err
	}
	if s.spec.OwnerToken != "" {
		tok, err := identity.Parse(s.spec.OwnerToken)
		if err == nil {
			s.owner, err = identity.Open(tok)
		}
		if err != nil {
			e := registry.Errorf(name, sessionctl.ErrOwner, "owner %s exited before the session started", s.spec.Owner)
			e.Cause = err
			return e
		}
	}
	if err := enterScope(s.spec, name); err != nil {
		return registry.Errorf(name, sessionctl.ErrSupervisor, "%v", err)
	}
	if s.log, err = sessionlog.Open(reg.LogPath(name, s.spec.RunID), s.spec.LogMax, s.spec.LogKeep, s.spec.RunID); err != nil {
		return fmt.Errorf("session %q: log: %w", name, err)
	}
	if s.stdout, s.stderr, s.capt, err = sessionlog.StartCapture(s.log); err != nil {
		s.log.Close()
		s.log = nil
		return fmt.Errorf("session %q: log: %w", name, err)
	}
	return nil
}

// selfToken is the supervisor's own identity token, which its record
// and its stop requests name.
func selfToken() (string, error) {
	self, err := identity.OpenPID(os.Getpid())
	if err != nil {
		return "", err
	}
	self.Close()
	return self.Token.String(), nil
}

// errAbandoned is a supervisor's end (Main's nil) when its client closed
// the hand-off without its go: the start failed before the name was
// claimed.
var errAbandoned = errors.New("supervisor: the start was abandoned before the name was claimed")

// endCapture ends the capture of a session whose command never started.
func (s *supervisor) endCapture() {
	if s.capt != nil {
		s.started()
		s.capt.End()
	}
}

// started drops the supervisor's copies of the capture pipes.
func (s *supervisor) started() {
	s.stdout.Close()
	s.stderr.Close()
}

// close releases what prepare opened, once the session has ended.
func (s *supervisor) close() {
	if s.closeProgress != nil {
		s.closeProgress()
	}
	if s.log != nil {
		s.log.Close()
	}
	if s.owner != nil {
		s.owner.Close()
	}
}

// command is the session's contain.Cmd, with the hooks that keep its
// record: the leaf is recorded before the command is spawned, and the
// stop before it begins, so that a supervisor killed at any point leaves
// a record `tether reap` can act on.
func (s *supervisor) command() *contain.Cmd {
	spec, w, reg := s.spec, s.w, s.w.reg
	c := contain.Command(spec.Argv[0], spec.Argv[1:]...)
	c.Env, c.Dir = spec.Env, spec.Dir
	c.RunID = spec.RunID
	c.Stdout, c.Stderr = s.stdout, s.stderr
	c.Grace, c.KillWait = spec.Grace, spec.KillWait
	c.Progress, s.closeProgress = sessionctl.OpenProgress(s.w.rec.RuntimeDir)
	c.StopSignal = sessionctl.SignalNum(spec.StopSignal) // 0 (SIGTERM) when empty
	c.StopExec = spec.StopExec
	c.Mechanism = receipt.Mechanism(spec.Mechanism)
	c.CgroupParent = spec.CgroupParent
	c.Limits, c.BestEffortLimits = spec.Limits, spec.BestEffortLimits
	c.UntilEmpty = spec.Until == sessionctl.UntilEmpty
	c.Timeout = spec.TTL
	c.AdoptOrphans = true // the supervisor starts no other children
	hooks.Set(c, hooks.Hooks{
		OwnProcessGroup: true,
		Storage:         spec.Storage,
		// If this supervisor dies, its watcher stops the group and ends
		// the session's record (issue 24).
		WatchRegistry: reg.Dir, WatchRecord: s.name,
		ExeCache: reg.Dir,
		Prepared: func(r *receipt.Receipt, marker string) error {
			return w.update(func(rec *registry.Record) {
				rec.Supervisor = s.self
				store.SetContainment(rec, r)
				rec.Marker = marker
			})
		},
		BeforeStop: func(_ string, kill <-chan struct{}) {
			sessionctl.StopFamily(reg, s.self, kill)
			w.update(func(rec *registry.Record) { rec.State = registry.StateStopping })
		},
	})
	return c
}

// start starts the command, records the session running and reports it
// ready; on failure it records and reports why, and returns that.
func (s *supervisor) start(c *contain.Cmd) error {
	if err := c.Start(); err != nil {
		s.started()
		s.capt.End()
		return fail(s.w, s.report, err, contain.StartErrorCode(err), c.Receipt().StopConfirmed)
	}
	s.started()
	r := c.Receipt()
	caveats := bindings()
	err := s.w.update(func(rec *registry.Record) {
		rec.Caveats = caveats
		rec.State = registry.StateRunning
		rec.Supervisor = s.self
		rec.Mechanism = string(r.Mechanism)
		if r.Main != nil {
			rec.Main = r.Main.Token
		}
		if r.Cgroup != nil {
			rec.Cgroup, rec.CgroupID = r.Cgroup.Path, r.Cgroup.ID
		}
	})
	if err != nil {
		c.Kill()
		c.Wait()
		s.capt.End()
		return fail(s.w, s.report, err, 125, c.Receipt().StopConfirmed)
	}
	return nil
}

// serve runs the session to its end: exec requests, stop requests and
// the owner's death turned into the stop, the log's losses recorded;
// then it records how the session ended.
func (s *supervisor) serve(c *contain.Cmd, sigs chan os.Signal) error {
	// Listening before the report: tether exec works once start returns.
	// A session without it still runs; exec then says it takes no requests.
	xs, err := serveExec(c, s.w.rec.RuntimeDir)
	if err != nil {
		s.w.update(func(rec *registry.Record) { rec.Error = "tether exec unavailable: " + err.Error() })
	}
	s.report(sessionctl.ReadyReport{OK: true})

	stopLoss, lossDone := make(chan struct{}), make(chan struct{})
	go s.w.watchLoss(s.log, stopLoss, lossDone)
	wt := &watcher{c: c, reg: s.w.reg, self: s.self, reason: make(chan string, 1), done: make(chan struct{})}
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		wt.watch(s.owner, sigs)
	}()
	waitErr := c.Wait()
	if xs != nil {
		xs.close() // exec clients hear how their commands ended
	}
	close(wt.done) // before close's owner.Close: the owner's waiter ends first
	<-watching     // and before the drain below: it may be taking requests
	wt.requests()  // those that came too late go (their stops wait for our exit, and remove what is left then)
	s.capt.End()
	s.log.Close()
	close(stopLoss)
	<-lossDone
	return finish(s.w, s.spec, c, s.log, wt.reason, waitErr)
}

// finish records how the session ended, with its log's files and the
// output the log lost, keeps its configuration beside its receipt (tether
// inspect), frees its name once its stop was confirmed, and applies the
// state dir's retention.
func finish(w *recorder, spec *sessionctl.Spec, c *contain.Cmd, log *sessionlog.Log, reason chan string, waitErr error) error {
	r := c.Receipt()
	r.Name = w.rec.Name
	loss := log.Loss()
	r.OutputLoss = loss
	r.Logs, r.LogsOmitted, r.LogsOmittedBytes = log.Files()
	// The record and the receipt name what began the stop, in a
	// session's words: for a stop asked for, the request's own reason
	// (request, owner-exit, not-ready); ttl for its timeout. A request
	// that joined a stop already under way (the main's exit, the TTL)
	// names nothing.
	why := r.Stop.Reason
	switch contain.Reason(why) {
	case contain.ReasonRequest:
		select {
		case why = <-reason:
		default:
		}
	case contain.ReasonTimeout:
		why = "ttl"
	}
	r.Stop.Reason = why
	b, _ := r.JSON()
	rp, werr := w.reg.WriteReceipt(w.rec.Name, w.rec.RunID, b)
	// Best effort: inspect says when an ended run has no configuration.
	if cb, err := json.Marshal(spec); err == nil {
		w.reg.WriteConfig(w.rec.Name, w.rec.RunID, cb)
	}
	err := w.update(func(rec *registry.Record) {
		rec.State, rec.StopReason, rec.Exit, rec.OutputLoss = registry.StateStopped, why, &r.Exit, loss
		var msgs []string
		if !r.StopConfirmed {
			msgs = append(msgs, fmt.Sprintf("stop not confirmed: %v", waitErr))
		}
		if werr != nil {
			msgs = append(msgs, fmt.Sprintf("receipt not written: %v", werr))
		} else {
			rec.Receipt = rp
		}
		rec.Error = strings.Join(msgs, "; ")
	})
	err = errors.Join(werr, err)
	if r.StopConfirmed {
		err = errors.Join(err, w.reg.Release(w.rec.Name))
	}
	retain(w.reg)
	return err
}

// retain applies the state dir's retention (store.RetentionFromEnv: the
// last 20 ended runs, none older than 7 days, unless TETHER_RETAIN says
// otherwise) as a session ends: the moment the ended runs grow, off every
// start's path. A run that ended in the last minute is kept (Settle): its
// stopper reads its receipt after the supervisor exits, and a stop --all
// of more sessions than the bound would otherwise lose some. What it
// cannot remove is left for the next end, tether prune or tether reap: no
// session's end fails for it.
func retain(reg *store.Registry) {
	rt, _ := store.RetentionFromEnv(os.Getenv)
	reg.Prune(rt, time.Now(), false)
}

// refusal names the check that refused a start in the supervisor
// (StartError.Refusal), "" for other failures.
func refusal(err error) string {
	switch {
	case errors.Is(err, limits.ErrUnavailable), errors.Is(err, limits.ErrAboveParent):
		return receipt.RefusedLimits
	case errors.Is(err, sessionctl.ErrOwner):
		return receipt.RefusedOwnerGone
	}
	return ""
}

// fail records a session that could not start and reports it. Its
// runtime dir is released only when nothing of it may still run
// (confirmed); otherwise the record stays live, saying so, for `tether
// reap`, which releases the dir once it has proven the stop.
func fail(w *recorder, report func(sessionctl.ReadyReport), err error, code int, confirmed bool) error {
	if why := refusal(err); why != "" && confirmed {
		// A refusal leaves nothing: no leaf (the failed start removed
		// it), no record, no log; tether start writes its receipt.
		w.reg.Delete(w.rec.Name)
		for _, p := range store.LogFiles(w.reg.LogPath(w.rec.Name, w.rec.RunID)) {
			os.Remove(p)
		}
		w.reg.Release(w.rec.Name)
		report(sessionctl.ReadyReport{Error: err.Error(), Code: 125, Refusal: why})
		return err
	}
	w.update(func(rec *registry.Record) {
		rec.State, rec.Error = registry.StateFailed, err.Error()
		if !confirmed {
			rec.State = registry.StateStopping
			rec.Error += "; its stop was not confirmed: runtime dir kept for tether reap"
		}
		rec.Exit = &receipt.Exit{Code: code, MainStatus: -1}
	})
	if confirmed {
		w.reg.Release(w.rec.Name)
	}
	report(sessionctl.ReadyReport{Error: err.Error(), Code: code})
	return err
}
