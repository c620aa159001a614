//go:build linux || windows || darwin

package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Supervise runs session name of the registry at stateDir: it is the body
// of the hidden `tether __supervise` command. ready receives one readyReport
// line once the command runs or could not start. It returns when the
// session has ended.
func supervise(stateDir, name string, ready *os.File) error {
	detachFromCaller(ready)
	report := func(r readyReport) {
		if ready != nil {
			json.NewEncoder(ready).Encode(r)
			ready.Close()
			ready = nil
		}
	}
	defer report(readyReport{Error: "supervisor ended without starting the session", Code: 125})
	reg, err := registry.Open(stateDir)
	if err != nil {
		report(readyReport{Error: err.Error(), Code: 125})
		return err
	}
	rec, err := reg.Read(name)
	if err != nil {
		report(readyReport{Error: err.Error(), Code: 125})
		return err
	}
	w := &recorder{reg: reg, rec: rec}
	spec, err := readSpec(reg, rec)
	if err != nil {
		return fail(w, report, err, 125, true)
	}
	// Held before the command runs: what it does to its runtime dir later
	// cannot redirect the supervisor's reads of it.
	rtd, err := openRTDir(rec.RuntimeDir)
	if err != nil {
		return fail(w, report, fmt.Errorf("session %q: runtime dir: %w", name, err), 125, true)
	}
	defer rtd.close()
	var owner *identity.Handle
	if spec.OwnerToken != "" {
		tok, err := identity.Parse(spec.OwnerToken)
		if err == nil {
			owner, err = identity.Open(tok)
		}
		if err != nil {
			e := registry.Errorf(name, ErrOwner, "owner %s exited before the session started", spec.Owner)
			e.Cause = err
			return fail(w, report, e, 125, true)
		}
		defer owner.Close()
	}
	self, err := identity.OpenPID(os.Getpid())
	if err != nil {
		return fail(w, report, err, 125, true)
	}
	self.Close()
	log, err := openLog(reg.LogPath(name), spec.LogMax, spec.LogKeep, spec.RunID)
	if err != nil {
		return fail(w, report, fmt.Errorf("session %q: log: %w", name, err), 125, true)
	}
	defer log.Close()
	stdout, stderr, capt, err := startCapture(log)
	if err != nil {
		return fail(w, report, fmt.Errorf("session %q: log: %w", name, err), 125, true)
	}
	// The command gets the pipes' write ends; the supervisor's copies go
	// once it started, so the capture sees EOF when the session's last
	// writer is gone.
	started := func() {
		stdout.Close()
		stderr.Close()
	}

	if err := enterScope(spec, name); err != nil {
		started()
		capt.End()
		return fail(w, report, registry.Errorf(name, ErrSupervisor, "%v", err), 125, true)
	}
	c := contain.Command(spec.Argv[0], spec.Argv[1:]...)
	c.Env, c.Dir = spec.Env, spec.Dir
	c.RunID = spec.RunID
	c.Stdout, c.Stderr = stdout, stderr
	c.Grace, c.KillWait = spec.Grace, spec.KillWait
	progress, closeProgress := openProgress(rec.RuntimeDir)
	defer closeProgress()
	c.Progress = progress
	c.StopSignal = signalNum(spec.StopSignal) // 0 (SIGTERM) when empty
	c.Mechanism = receipt.Mechanism(spec.Mechanism)
	c.CgroupParent = spec.CgroupParent
	c.Limits, c.BestEffortLimits = spec.Limits, spec.BestEffortLimits
	c.UntilEmpty = spec.Until == UntilEmpty
	c.Timeout = spec.TTL
	c.AdoptOrphans = true // the supervisor starts no other children
	// The leaf is recorded before the command is spawned, and the stop
	// before it begins, so that a supervisor killed at any point leaves a
	// record `tether reap` can act on.
	hooks.Set(c, hooks.Hooks{
		OwnProcessGroup: true,
		// If this supervisor dies, its watcher stops the group and ends
		// the session's record (issue 24).
		WatchRegistry: reg.Dir, WatchRecord: name,
		Prepared: func(r *receipt.Receipt, marker string) error {
			return w.update(func(rec *registry.Record) {
				rec.Supervisor = self.Token.String()
				rec.SetContainment(r)
				rec.Marker = marker
			})
		},
		BeforeStop: func(_ string, kill <-chan struct{}) {
			stopFamily(reg, self.Token.String(), kill)
			w.update(func(rec *registry.Record) { rec.State = registry.StateStopping })
		},
	})

	sigs, err := stopRequests(self.Token.String())
	if err != nil {
		return fail(w, report, err, 125, true)
	}
	if err := c.Start(); err != nil {
		started()
		capt.End()
		return fail(w, report, err, contain.StartErrorCode(err), c.Receipt().StopConfirmed)
	}
	started()
	r := c.Receipt()
	caveats := bindings()
	err = w.update(func(rec *registry.Record) {
		rec.Caveats = caveats
		rec.State = registry.StateRunning
		rec.Supervisor = self.Token.String()
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
		capt.End()
		return fail(w, report, err, 125, c.Receipt().StopConfirmed)
	}
	// Listening before the report: tether exec works once start returns.
	// A session without it still runs; exec then says it takes no requests.
	xs, err := serveExec(c, rec.RuntimeDir)
	if err != nil {
		w.update(func(rec *registry.Record) { rec.Error = "tether exec unavailable: " + err.Error() })
	}
	report(readyReport{OK: true})

	stopLoss, lossDone := make(chan struct{}), make(chan struct{})
	go w.watchLoss(log, stopLoss, lossDone)
	wt := &watcher{c: c, rt: rtd, self: self.Token.String(), reason: make(chan string, 1), done: make(chan struct{})}
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		wt.watch(owner, sigs)
	}()
	waitErr := c.Wait()
	if xs != nil {
		xs.close() // exec clients hear how their commands ended
	}
	close(wt.done) // before the deferred owner.Close: the owner's waiter ends first
	<-watching     // and before the deferred rtd.close: it may be reading requests
	capt.End()
	log.Close()
	close(stopLoss)
	<-lossDone
	return finish(w, c, log, wt.reason, waitErr)
}

// finish records how the session ended, with its log's files and the
// output the log lost, and frees its name once its stop was confirmed.
func finish(w *recorder, c *contain.Cmd, log *rotatingLog, reason chan string, waitErr error) error {
	r := c.Receipt()
	r.Name = w.rec.Name
	loss := log.Loss()
	r.OutputLoss = loss
	r.Logs, r.LogsOmitted, r.LogsOmittedBytes = log.Files()
	why := r.Stop.Reason
	select {
	case why = <-reason:
	default:
		if why == string(contain.ReasonTimeout) {
			why = "ttl"
		}
	}
	b, _ := r.JSON()
	rp, werr := w.reg.WriteReceipt(w.rec.Name, b)
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
	return err
}

// fail records a session that could not start and reports it. Its
// runtime dir is released only when nothing of it may still run
// (confirmed); otherwise the record stays live, saying so, for `tether
// reap`, which releases the dir once it has proven the stop.
func fail(w *recorder, report func(readyReport), err error, code int, confirmed bool) error {
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
	report(readyReport{Error: err.Error(), Code: code})
	return err
}
