package reap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// killedAt checks that tether died of the SIGKILL of crash point point.
func (f *faultEnv) killedAt(what, point string, r faultResult) {
	f.t.Helper()
	if r.signal != syscall.SIGKILL {
		f.t.Fatalf("%s with TETHER_CRASH_AT=%s = %s, want killed by SIGKILL at the crash point (not reached?)\nstderr: %s", what, point, r, r.stderr)
	}
}

// checkAccounted checks that the reap that produced rep accounted for
// every file that was in records/ before it (before): each record is in
// the report with a class and a plan; one reap acted on is done (a stop
// with a confirmed receipt, also in receipts/), one reported is left
// byte for byte; a record is deleted only as a finished run; no leaf of a
// record reap finished is left; a session it finished has no runtime dir
// left. A temp file of an interrupted atomic write is reported or
// cleaned, not left behind unmentioned.
func (f *faultEnv) checkAccounted(before map[string]faultFile, rep *reap.Report) {
	t := f.t
	t.Helper()
	after := f.recordFiles()
	for fn, ff := range before {
		if ff.temp {
			_, still := after[fn]
			named := faultAction(rep, fn) != nil || faultAction(rep, strings.TrimSuffix(fn, ".json")) != nil ||
				(ff.rec != nil && faultAction(rep, ff.rec.Name) != nil)
			if still && !named {
				what := "undecodable"
				if ff.rec != nil {
					what = fmt.Sprintf("record %q, state %s, cgroup %q", ff.rec.Name, ff.rec.State, ff.rec.Cgroup)
				}
				t.Errorf("records/%s, the temp file of an atomic write interrupted by a crash (%s), is neither in the reap report nor cleaned up: it stays forever", fn, what)
			}
			continue
		}
		name := strings.TrimSuffix(fn, ".json")
		a := faultAction(rep, name)
		if a == nil {
			t.Errorf("record %s: not in the reap report: lost", name)
			continue
		}
		if a.Class == "" || a.Plan == "" {
			t.Errorf("record %s: class %q plan %q, want both", name, a.Class, a.Plan)
		}
		switch a.Class {
		case reap.DeadLeaf, reap.DeadFallback:
			if !a.Done || a.Error != "" || a.Receipt == nil || !a.Receipt.StopConfirmed {
				t.Errorf("record %s (%s): done %t, error %q, receipt %v; want done with a confirmed stop", name, a.Class, a.Done, a.Error, faultConfirmed(a.Receipt))
			}
			key := name // the receipt of the record's run (issue 27)
			if ff.rec != nil && store.CheckRunID(ff.rec.RunID) == nil {
				key += "@" + ff.rec.RunID
			}
			b, err := os.ReadFile(filepath.Join(f.state, "receipts", key+".json"))
			var r receipt.Receipt
			if err == nil {
				err = json.Unmarshal(b, &r)
			}
			if err != nil || !r.StopConfirmed {
				t.Errorf("receipts/%s.json: %v, stop_confirmed %t; want the confirmed receipt of the reap", name, err, r.StopConfirmed)
			}
		case reap.DeadEmpty, reap.OtherBoot, reap.Ended:
			if !a.Done || a.Error != "" {
				t.Errorf("record %s (%s): done %t, error %q; want done", name, a.Class, a.Done, a.Error)
			}
		case reap.Corrupt:
			// Error carries why it is corrupt; Done says it was quarantined.
			if !a.Done || a.Error == "" {
				t.Errorf("record %s (%s): done %t, error %q; want quarantined, with the reason", name, a.Class, a.Done, a.Error)
			}
		default: // reported and left alone
			if a.Done || !bytes.Equal(after[fn].data, ff.data) {
				t.Errorf("record %s (%s): done %t, changed %t; want it reported and left as it was", name, a.Class, a.Done, !bytes.Equal(after[fn].data, ff.data))
			}
		}
		// A session record that ended moves from records/ to ended/.
		if _, ok := after[fn]; !ok && a.Class != reap.Corrupt && (ff.rec == nil || ff.rec.Kind != "run") && f.record(name) == nil {
			t.Errorf("record %s (%s): deleted by reap; only a finished run's record may be", name, a.Class)
		}
		if ff.rec == nil || !a.Done || a.Class == reap.Corrupt {
			continue
		}
		if ff.rec.Cgroup != "" {
			if _, err := os.Stat(ff.rec.Cgroup); !errors.Is(err, os.ErrNotExist) {
				procs, _ := os.ReadFile(filepath.Join(ff.rec.Cgroup, "cgroup.procs"))
				t.Errorf("record %s (%s, state %s): its leaf %s is still there (procs %q) after reap reported it done: nothing will remove it (it is referenced, so not an orphan either)",
					name, a.Class, ff.rec.State, ff.rec.Cgroup, strings.Fields(string(procs)))
			}
		}
		if ff.rec.Kind != "run" && ff.rec.RuntimeDir != "" {
			rec := f.record(name)
			if rec == nil || rec.Live() {
				t.Errorf("session %s: record after reap %+v; want it ended", name, rec)
			} else if _, err := os.Stat(ff.rec.RuntimeDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("session %s (%s, now %s): runtime dir %s still there after reap", name, a.Class, rec.State, ff.rec.RuntimeDir)
			}
		}
	}
}

func faultConfirmed(r *receipt.Receipt) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("stop_confirmed %t, evidence %+v", r.StopConfirmed, r.Evidence)
}

// reapOrphans checks the orphan leaves rep reported (want of them, all
// in the test's cgroup, all empty: a leaf only goes unrecorded before
// anything starts in it), then removes them with --orphan-leaves.
func (f *faultEnv) reapOrphans(rep *reap.Report, want int) {
	t := f.t
	t.Helper()
	orphans := faultV2Orphans(rep)
	for _, ol := range orphans {
		if filepath.Dir(ol.Path) != f.cg {
			t.Errorf("orphan leaf %s: outside the caller's cgroup %s", ol.Path, f.cg)
		}
		if ol.Procs != 0 || ol.Removed {
			t.Errorf("orphan leaf %s: procs %d removed %t; want an empty leaf, reported only", ol.Path, ol.Procs, ol.Removed)
		}
	}
	if len(orphans) != want {
		t.Errorf("orphan leaves = %+v, want %d", orphans, want)
	}
	if len(orphans) == 0 {
		return
	}
	// Only an empty leaf older than reap.StaleAge is removed: age them.
	old := time.Now().Add(-2 * reap.StaleAge)
	for _, ol := range orphans {
		if err := os.Chtimes(ol.Path, old, old); err != nil {
			t.Errorf("age orphan leaf %s: %v", ol.Path, err)
		}
	}
	r, rep2 := f.reap("--orphan-leaves")
	if r.code != 0 {
		t.Errorf("tether reap --orphan-leaves = %s: %s", r, r.stderr)
	}
	for _, ol := range faultV2Orphans(rep2) {
		if !ol.Removed || ol.Error != "" {
			t.Errorf("tether reap --orphan-leaves: %s removed %t error %q", ol.Path, ol.Removed, ol.Error)
		}
		if _, err := os.Stat(ol.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("orphan leaf %s still there after --orphan-leaves: %v", ol.Path, err)
		}
	}
}

// faultV2Orphans returns the v2 orphan leaves of rep. The v1 ones (the
// limits of hybrid hosts) are under the test binary's v1 cgroups, shared
// by the tests running in parallel, so they cannot be told apart by test.
func faultV2Orphans(rep *reap.Report) []reap.OrphanLeaf {
	var out []reap.OrphanLeaf
	for _, ol := range rep.OrphanLeaves {
		if ol.Hierarchy == "v2" {
			out = append(out, ol)
		}
	}
	return out
}

// checkNoop checks that another reap finds nothing to do: no error, no
// action but on ended or live records, no orphan leaf, no run record and
// no leaf left.
func (f *faultEnv) checkNoop() {
	t := f.t
	t.Helper()
	r, rep := f.reap()
	if r.code != 0 {
		t.Errorf("second tether reap = %s: %s", r, r.stderr)
	}
	// Stale entries (a runtime dir without a record, a temp file of an
	// interrupted write, a stop request nobody takes, a log no run owns) are
	// reported until they are older than
	// reap.StaleAge, then removed: age them and check that they go.
	var stale []string
	for _, a := range rep.Actions {
		if a.Class == reap.Stale && !a.Done && a.Error == "" {
			p := filepath.Join(f.state, "s", a.Name)
			switch {
			case a.Kind == "request":
				p = filepath.Join(f.state, "requests", a.Name)
			case a.Kind == "log":
				p = filepath.Join(f.state, "logs", a.Name)
			case strings.HasPrefix(a.Name, "."):
				p = filepath.Join(f.state, "records", a.Name)
			}
			old := time.Now().Add(-2 * reap.StaleAge)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Errorf("age stale %s: %v", p, err)
			}
			stale = append(stale, a.Name)
		}
	}
	if len(stale) > 0 {
		r, rep = f.reap()
		for _, name := range stale {
			if a := faultAction(rep, name); a == nil || !a.Done {
				t.Errorf("stale %s older than reap.StaleAge: %+v, want removed", name, a)
			}
		}
		r, rep = f.reap()
	}
	for _, a := range rep.Actions {
		if a.Error != "" || (a.Class != reap.Ended && a.Class != reap.Supervised) {
			t.Errorf("second tether reap: %s: class %s, done %t, error %q; want nothing left to do", a.Name, a.Class, a.Done, a.Error)
		}
	}
	if o := faultV2Orphans(rep); len(o) != 0 {
		t.Errorf("second tether reap: orphan leaves %+v", o)
	}
	for fn, ff := range f.recordFiles() {
		if !ff.temp && ff.rec != nil && ff.rec.Kind == "run" {
			t.Errorf("second tether reap: run record %s left (state %s)", fn, ff.rec.State)
		}
	}
	if l := f.leaves(); len(l) != 0 {
		t.Errorf("leaves left: %v", l)
	}
}

// deadRun leaves a run whose tether was SIGKILLed in the middle of its
// stop, its leaf still holding TERM-ignoring members, and returns its
// record. crashRun stops it once the workload ignores SIGTERM: a stop
// that needs no kill never reaches stop-before-kill.
func (f *faultEnv) deadRun() *registry.Record {
	t := f.t
	t.Helper()
	f.killedAt("tether run", "stop-before-kill", f.crashRun("stop-before-kill", "--no-reap", "--grace", "100ms"))
	var rec *registry.Record
	for fn, ff := range f.recordFiles() {
		if ff.temp || ff.rec == nil || ff.rec.Kind != "run" {
			t.Fatalf("records/%s: want only the dead run's record", fn)
		}
		rec = ff.rec
	}
	if rec == nil || rec.Cgroup == "" {
		t.Fatalf("dead run's record = %+v, want one with its leaf", rec)
	}
	if len(f.survivors()) == 0 {
		t.Fatalf("the dead run's leaf holds no members: nothing for reap to prove itself on")
	}
	return rec
}
