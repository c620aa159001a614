package reap_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/reap"
)

// TestFaultStoppedFrozenZombie: a session whose supervisor was SIGKILLed
// while its group was in a state that defeats a naive stop — a member
// stopped by SIGSTOP, the whole leaf frozen, a zombie member whose parent
// ignores SIGTERM and SIGCHLD and never waits — is stopped by one reap
// with SIGTERM alone where the members obey it, and proven.
func TestFaultStoppedFrozenZombie(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, script string
		prepare      func(f *faultEnv, leaf string)
		wantKill     bool
		sleepers     int // its "sleep 1000" processes, all forked before the fault
	}{
		{"stopped member", `sleep 1000 & echo $! > stopme; sleep 1000`, func(f *faultEnv, leaf string) {
			b, _ := os.ReadFile(filepath.Join(f.io, "stopme"))
			pid := 0
			for _, c := range strings.TrimSpace(string(b)) {
				pid = pid*10 + int(c-'0')
			}
			if pid == 0 || syscall.Kill(pid, syscall.SIGSTOP) != nil {
				f.t.Fatalf("SIGSTOP of the member %q failed", b)
			}
		}, false, 2},
		// A handler must run to act on SIGTERM: frozen, it cannot (a
		// default-action SIGTERM kills even a frozen task).
		{"frozen leaf", `sleep 1000 & setsid sh -c 'trap "exit 0" TERM; sleep 1000 & wait' & sleep 1000`, func(f *faultEnv, leaf string) {
			if err := os.WriteFile(filepath.Join(leaf, "cgroup.freeze"), []byte("1"), 0); err != nil {
				f.t.Fatal(err)
			}
		}, false, 3},
		{"zombie of a TERM- and CHLD-ignoring parent", `setsid sh -c 'trap "" TERM CHLD; sleep 0 & exec sleep 1000' & sleep 1000`, nil, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			r := f.tether(nil, "start", "--no-reap", "--owner", "none", "--name", "s", "--", "sh", "-c", tc.script)
			if r.code != 0 {
				t.Fatalf("tether start = %s: %s", r, r.stderr)
			}
			// Every member forked before the fault: one forked after the
			// stop's TERM pass would be missed by it (under TCG the
			// supervisor and two processes were there well before the
			// rest).
			for deadline := time.Now().Add(faultPatience); f.sleepers() < tc.sleepers; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the session did not start its members: %v", f.survivors())
				}
			}
			time.Sleep(50 * time.Millisecond)
			f.killSupervisor("s")
			if tc.prepare != nil {
				tc.prepare(f, f.record("s").Cgroup)
			}
			before := f.recordFiles()
			grace := "10s" // ample: the members obey SIGTERM
			if tc.wantKill {
				grace = "200ms"
			}
			rr, rep := f.reapWith(nil, "--grace", grace)
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			a := faultAction(rep, "s")
			if a == nil || a.Class != reap.DeadLeaf || a.Receipt == nil || !a.Receipt.StopConfirmed {
				t.Fatalf("action for s = %+v, want %s with a confirmed stop", a, reap.DeadLeaf)
			}
			if a.Receipt.Evidence.KillUsed != tc.wantKill {
				t.Errorf("kill used = %t, want %t\nsteps: %+v", a.Receipt.Evidence.KillUsed, tc.wantKill, a.Receipt.Stop.Steps)
			}
			f.checkAccounted(before, rep)
			f.checkNoop()
		})
	}
}
