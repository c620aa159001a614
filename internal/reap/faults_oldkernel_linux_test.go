package reap_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/receipt"
)

// TestFaultOldKernel runs a session and reaps it after its supervisor was
// SIGKILLed, with the binary forced onto the paths of older kernels: no
// PIDFD_GET_INFO (before 6.13: membership by /proc/PID/cgroup) and no
// cgroup.kill (before 5.14: freeze+sigkill). On 6.12 reap used to prove
// no member there, send no SIGTERM and waste the grace.
func TestFaultOldKernel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, force string
		obeys       bool // the workload exits on SIGTERM
	}{
		{"no-pidfd-info obeys TERM", "no-pidfd-info", true},
		{"no-pidfd-info ignores TERM", "no-pidfd-info", false},
		{"no-cgroup-kill", "no-cgroup-kill", false},
		{"both", "no-pidfd-info,no-cgroup-kill", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			env := []string{"TETHER_TEST_FORCE=" + tc.force}
			script := `trap "" TERM; while :; do setsid sh -c 'trap "" TERM; sleep 1000' & sleep 0.02; done`
			if tc.obeys {
				script = `setsid sleep 1000 & sleep 1000`
			}
			r := f.tether(env, "start", "--no-reap", "--owner", "none", "--name", "s", "--", "sh", "-c", script)
			if r.code != 0 {
				t.Fatalf("tether start = %s: %s", r, r.stderr)
			}
			// Two daemons, not counting the supervisor and the main
			// process, which die first: otherwise nothing may outlive the
			// supervisor (and under systemd its emptied scope, leaf and
			// all, is gone before reap looks).
			for deadline := time.Now().Add(faultPatience); f.sleepers() < 2; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the session has no daemon: %v", f.survivors())
				}
			}
			f.killSupervisor("s")
			before := f.recordFiles()
			grace := "200ms"
			if tc.obeys {
				grace = "10s" // ample: the members exit at SIGTERM
			}
			rr, rep := f.reapWith(env, "--grace", grace)
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			a := faultAction(rep, "s")
			if a == nil || a.Class != reap.DeadLeaf || a.Receipt == nil {
				t.Fatalf("action for s = %+v, want %s with a receipt", a, reap.DeadLeaf)
			}
			ev := a.Receipt.Evidence
			if ev.MembersSeen < 2 || ev.Signalled < 2 || !a.Receipt.StopConfirmed {
				t.Errorf("evidence = %+v, confirmed %t; want >= 2 members proven and sent SIGTERM, stop confirmed", ev, a.Receipt.StopConfirmed)
			}
			if tc.obeys && ev.KillUsed {
				t.Errorf("kill used although every member obeys SIGTERM: the grace was wasted\nsteps: %+v", a.Receipt.Stop.Steps)
			}
			caveats := strings.Join(a.Receipt.Caveats, "\n")
			if strings.Contains(tc.force, "no-pidfd-info") && !strings.Contains(caveats, "/proc/PID/cgroup") {
				t.Errorf("caveats = %q, want the /proc membership caveat", a.Receipt.Caveats)
			}
			if strings.Contains(tc.force, "no-cgroup-kill") {
				if k := faultStep(a.Receipt, "kill"); k == nil || !strings.HasPrefix(k.Observed, "freeze+sigkill") {
					t.Errorf("kill step = %+v, want freeze+sigkill", k)
				}
			}
			f.checkAccounted(before, rep)
			f.reapOrphans(rep, 0)
			f.checkNoop()
		})
	}
}

func faultStep(r *receipt.Receipt, name string) *receipt.Step {
	for i := range r.Stop.Steps {
		if r.Stop.Steps[i].Name == name {
			return &r.Stop.Steps[i]
		}
	}
	return nil
}
