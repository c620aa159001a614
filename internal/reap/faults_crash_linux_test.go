package reap_test

import (
	"errors"
	"fmt"
	"maps"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/registry"
)

// TestFaultRunCrash kills `tether run` at every crash point and checks
// that `tether reap` recovers: no process survives, every record is
// accounted for, no leaf is left, and a second reap has nothing to do.
func TestFaultRunCrash(t *testing.T) {
	t.Parallel()
	for _, point := range faultAllPoints {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			f.killedAt("tether run", point, f.crashRun(point, "--no-reap", "--grace", "100ms"))
			before := f.recordFiles()
			switch point {
			case "before-leaf", "after-leaf":
				// The record is written once, when the leaf exists and
				// before the spawn (issue 13): before that, nothing of
				// the run is recorded, and no process of it exists.
				if len(before) != 0 {
					t.Errorf("record files after a crash at %s: %v, want none: the record is written after the leaf", point, slices.Collect(maps.Keys(before)))
				}
			case "atomic-before-rename":
				// The run's one record is created, not replaced: killed
				// before its link, the run has no record (an unnamed
				// O_TMPFILE file goes with the process; elsewhere a temp
				// file is left) and no process, only its leaf.
				for fn, ff := range before {
					if !ff.temp {
						t.Errorf("record %s after a crash before the record was linked, want none", fn)
					}
				}
			default:
				if len(before) == 0 {
					t.Fatalf("no record file after a crash at %s: a run must be recorded before its command is spawned", point)
				}
			}
			rr, rep := f.reap()
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			f.checkAccounted(before, rep)
			for fn, ff := range before {
				if a := faultAction(rep, strings.TrimSuffix(fn, ".json")); !ff.temp && a != nil && !strings.HasPrefix(string(a.Class), "dead-supervisor") {
					t.Errorf("record %s of a SIGKILLed tether run: class %s, want a dead-supervisor class", fn, a.Class)
				}
			}
			orphans := 0
			if point == "after-leaf" || point == "atomic-before-rename" {
				orphans = 1 // created before the record was written
			}
			f.reapOrphans(rep, orphans)
			f.checkNoop()
		})
	}
}

// TestFaultSessionCrash kills a session's supervisor at every crash point
// (and `tether start` itself at the one of its atomic writes), then checks
// that `tether reap` recovers as for runs. The crash variable is in the
// environment of `tether start`, which the supervisor inherits; for the
// stop points the session starts normally and `tether stop` makes the
// supervisor die in the middle of its stop.
func TestFaultSessionCrash(t *testing.T) {
	t.Parallel()
	for _, point := range faultAllPoints {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			start := f.tether([]string{"TETHER_CRASH_AT=" + point},
				"start", "--no-reap", "--owner", "none", "--name", "s", "--grace", "100ms", "--", "sh", "-c", faultSessionScript)
			stopping := slices.Contains(faultStopPoints, point)
			switch {
			case point == "atomic-before-rename":
				f.killedAt("tether start", point, start)
			case stopping:
				if start.code != 0 {
					t.Fatalf("tether start = %s, want 0: %s", start, start.stderr)
				}
				// Stop only once the workload ignores TERM and has its
				// child: a TERM before the trap ends the session politely,
				// before the crash point (seen in the Debian 13 VM).
				ready := filepath.Join(f.state, "s", "s", "ready")
				for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					if _, err := os.Stat(ready); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the session's workload never said it was ready (%s)", ready)
					}
				}
				stop := f.tether(nil, "stop", "--grace", "100ms", "s")
				if stop.code == 0 {
					t.Fatalf("tether stop = 0 (%s), want a failure: the supervisor should have died at %s", stop.stdout, point)
				}
				t.Logf("tether stop = %s: %s", stop, strings.TrimSpace(stop.stderr))
			default:
				if start.code == 0 {
					t.Fatalf("tether start = 0, want a failure: the supervisor should have died at %s", point)
				}
				t.Logf("tether start = %s: %s", start, strings.TrimSpace(start.stderr))
			}
			before := f.recordFiles()
			rr, rep := f.reap()
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			f.checkAccounted(before, rep)
			if stopping {
				a := faultAction(rep, "s")
				// Under systemd the supervisor has a scope of its own:
				// once it died after the group was killed, the scope was
				// empty and systemd removed it, leaf included. Nothing is
				// left for reap but the record.
				// The same can happen after the TERM: the workload's
				// members die of it, its main of the parent-death signal.
				emptied := delegate.Booted() && a != nil && a.Class == reap.DeadEmpty
				switch rec := f.record("s"); {
				case emptied && (rec == nil || rec.State != registry.StateStopped || rec.StopReason != "supervisor-died"):
					t.Errorf("session s after reap: %+v, want stopped, supervisor-died", rec)
				case emptied:
				case a == nil || a.Class != reap.DeadLeaf:
					t.Errorf("session s, supervisor killed in its stop: action %+v, want %s", a, reap.DeadLeaf)
				case rec == nil || rec.State != registry.StateStopped || rec.StopReason != "reaped" || rec.Receipt == "":
					t.Errorf("session s after reap: %+v, want stopped, reaped, with its receipt", rec)
				}
			}
			// Whatever happened, the name is not stuck: no runtime dir
			// is left without a live session or a report of it.
			rt := filepath.Join(f.state, "s", "s")
			if _, err := os.Stat(rt); !errors.Is(err, os.ErrNotExist) {
				rec := f.record("s")
				if rec == nil && faultAction(rep, "s") == nil {
					ents, _ := os.ReadDir(rt)
					var names []string
					for _, e := range ents {
						names = append(names, e.Name())
					}
					t.Errorf("runtime dir %s (holding %v) is left with no record and no mention in the reap report: the name %q stays claimed (tether start --name s fails) and nothing cleans it", rt, names, "s")
				} else if rec != nil && !rec.Live() {
					t.Errorf("runtime dir %s left for the ended session s (%s)", rt, rec.State)
				}
			}
			orphans := 0
			if point == "after-leaf" && !delegate.Booted() {
				// Under systemd the empty leaf went with the dead
				// supervisor's scope.
				orphans = 1
			}
			f.reapOrphans(rep, orphans)
			f.checkNoop()
		})
	}
}

// TestFaultSupervisorKilled SIGKILLs a running session's supervisor at a
// random moment, through a pidfd verified against its recorded identity,
// while the session keeps forking setsid'd daemons; reap stops the leaf.
func TestFaultSupervisorKilled(t *testing.T) {
	t.Parallel()
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			r := f.tether(nil, "start", "--no-reap", "--owner", "none", "--name", "s", "--",
				"sh", "-c", `trap "" TERM; while :; do setsid sleep 1000 & sleep 0.02; done`)
			if r.code != 0 {
				t.Fatalf("tether start = %s: %s", r, r.stderr)
			}
			// At least one daemon escaped the process group first, so
			// that reap has members to prove itself on.
			for deadline := time.Now().Add(faultPatience); !faultHasDaemon(f.survivors()); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the session forked no daemon: %v", f.survivors())
				}
			}
			time.Sleep(mrand.N(300 * time.Millisecond))
			rec := f.record("s")
			tok, err := identity.Parse(rec.Supervisor)
			if err != nil {
				t.Fatalf("supervisor of s: %v", err)
			}
			h, err := identity.Open(tok)
			if err != nil {
				t.Fatalf("supervisor of s: %v", err)
			}
			h.Signal(syscall.SIGKILL)
			if !h.WaitExit(faultPatience) {
				t.Fatalf("supervisor %s did not exit after SIGKILL", tok)
			}
			h.Close()
			before := f.recordFiles()
			rr, rep := f.reap()
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			if a := faultAction(rep, "s"); a == nil || a.Class != reap.DeadLeaf || a.Receipt == nil || a.Receipt.Evidence.MembersSeen == 0 {
				t.Errorf("action for s = %+v, want %s with the members it stopped", a, reap.DeadLeaf)
			}
			f.checkAccounted(before, rep)
			f.reapOrphans(rep, 0)
			f.checkNoop()
		})
	}
}

// faultHasDaemon reports whether procs holds a session's `sleep 1000`.
func faultHasDaemon(procs map[int]string) bool {
	for _, argv := range procs {
		if argv == "sleep 1000" {
			return true
		}
	}
	return false
}
