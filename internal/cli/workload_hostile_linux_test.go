package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
)

// TestHostileWorkload: nothing a session's own command does to its
// runtime dir (TETHER_SESSION_DIR) or its process group keeps `tether stop`
// from stopping it, confirmed, or stops it behind the user's back (issue
// 22, items 1, 5 and 6). Each workload ignores SIGTERM, so only the
// protocol's kill ends it. Before the fixes, the FIFOs hung the stop for
// good, the damaged dirs made `tether stop` fail (exit 1, the session
// running on), and `kill -HUP 0` stopped the session.
func TestHostileWorkload(t *testing.T) {
	cgroupParent(t)
	const sleep = `trap "" TERM; echo ready > "$READY"; exec sleep 1000`
	tests := []struct {
		name, setup string
	}{
		// The supervisor wrote each step of the stop by opening this path.
		{"progress file a FIFO", `rm -f "$TETHER_SESSION_DIR/progress.jsonl"; mkfifo "$TETHER_SESSION_DIR/progress.jsonl"`},
		// The watcher read every stop-*.json of the runtime dir before
		// acting on the wake-up (requests are in the state dir's
		// requests/ now); this one sorts first.
		{"request file a FIFO", `mkfifo "$TETHER_SESSION_DIR/stop-0-planted.json"`},
		{"runtime dir removed", `rm -rf "$TETHER_SESSION_DIR"`},
		{"runtime dir chmod 750", `chmod 750 "$TETHER_SESSION_DIR"`},
		// The symlink names a dir with a file of the user's that looks like
		// a request: the supervisor must neither read nor remove it.
		{"runtime dir replaced by a symlink", `mv "$TETHER_SESSION_DIR" "$TETHER_SESSION_DIR.moved" && ln -s "$VICTIM" "$TETHER_SESSION_DIR"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xdg := stateEnv(t)
			s := filepath.Join(xdg, "tether", "s")
			ready := filepath.Join(xdg, "ready")
			victim := filepath.Join(xdg, "victim")
			os.Mkdir(victim, 0o700)
			bait := filepath.Join(victim, "stop-0-bait.json")
			os.WriteFile(bait, []byte(`{"grace_ms":-1}`), 0o600)
			mustStart(t, xdg, nil, "-q", "--name", "w", "-e", "READY="+ready, "-e", "VICTIM="+victim, "--", "sh", "-c", tt.setup+"; "+sleep)
			awaitFile(t, ready, nil)
			r := stopWithin(t, xdg, "--grace", "200ms", "w")
			if !r.StopConfirmed || r.Stop.Reason != "request" || r.Exit.Signal != "SIGKILL" {
				t.Errorf("receipt: confirmed %t, stop %+v, exit %+v; want confirmed, request, main killed", r.StopConfirmed, r.Stop, r.Exit)
			}
			// The stop's --grace is carried whatever became of the
			// runtime dir: the session's own (10s) would have applied.
			for _, st := range r.Stop.Steps {
				if st.Name == "kill" && st.ElapsedMS > 5000 {
					t.Errorf("kill at %d ms (%s): the stop's --grace 200ms was not carried", st.ElapsedMS, st.Observed)
				}
			}
			if _, err := os.Stat(bait); err != nil {
				t.Errorf("a file outside the runtime dir was taken for a request: %v", err)
			}
			// The name is free again: the damaged runtime dir went with the
			// session, and a new session of the name starts and stops.
			os.RemoveAll(filepath.Join(s, "w.moved"))
			mustStart(t, xdg, nil, "-q", "--name", "w", "--", "sleep", "1000")
			stopWithin(t, xdg, "w")
			assertNoSurvivors(t)
		})
	}

	// The command runs in a process group of its own: kill(0, sig) reaches
	// its own group, not its supervisor.
	t.Run("kill 0", func(t *testing.T) {
		xdg := stateEnv(t)
		ready := filepath.Join(xdg, "ready")
		mustStart(t, xdg, nil, "-q", "--name", "k", "-e", "READY="+ready, "--", "sh", "-c",
			`trap "" HUP INT TERM; kill -HUP 0; kill -INT 0; kill -TERM 0; `+sleep)
		awaitFile(t, ready, nil)
		// A supervisor that took them as stop requests has begun its stop
		// well within this (it acts on a signal at once).
		time.Sleep(300 * time.Millisecond)
		if st := statusOf(t, xdg, "k"); st.State != "running" {
			t.Errorf("after the command's kill 0: state %s, want running", st.State)
		}
		stopWithin(t, xdg, "--grace", "200ms", "k")
		assertNoSurvivors(t)
	})
}

// stopWithin runs `tether stop --json args...` and fails the test if it
// does not end within runDeadline (tetherCmd's context kills it) or
// does not succeed; it returns the one receipt.
func stopWithin(t *testing.T, xdg string, args ...string) *receipt.Receipt {
	t.Helper()
	t0 := time.Now()
	code, out, stderr := tetherIn(t, xdg, nil, append([]string{"stop", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("tether stop %s = %d after %s: %s", strings.Join(args, " "), code, time.Since(t0).Round(time.Millisecond), stderr)
	}
	var doc struct{ Receipts []*receipt.Receipt }
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Receipts) != 1 {
		t.Fatalf("tether stop --json: %v\n%s", err, out)
	}
	return doc.Receipts[0]
}

// TestSessionStartedInsideRun: a session started inside `tether run` with
// no owner outlives the run, its leaf made outside the run's, and the
// run's stop is confirmed with nothing of the session in it (issue 22,
// item 4). Without systemd the supervisor made its leaf inside the run's:
// the run's cgroup.kill killed the supervisor mid-stop and left the
// nested leaf behind, while the run's receipt still said confirmed.
func TestSessionStartedInsideRun(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "run.json")
	code, _, stderr := tetherIn(t, xdg, nil, "run", "--receipt", rc, "--", exe, "start", "-q", "--owner", "none", "--name", "inner", "--", "sleep", "1000")
	if code != 0 {
		t.Fatalf("tether run -- tether start = %d: %s", code, stderr)
	}
	r, _ := readReceipt(t, rc)
	if !r.StopConfirmed || r.Cgroup == nil || !r.Cgroup.Removed || r.StragglersTotal != 0 {
		t.Errorf("the run's receipt: confirmed %t, cgroup %+v, %d stragglers; want confirmed, removed, none (the session left the run's leaf)", r.StopConfirmed, r.Cgroup, r.StragglersTotal)
	}
	st := statusOf(t, xdg, "inner")
	if st.State != "running" || st.Cgroup == "" || strings.HasPrefix(st.Cgroup, r.Cgroup.Path+"/") {
		t.Errorf("the session after the run: state %s, cgroup %q; want running, outside the run's leaf %s", st.State, st.Cgroup, r.Cgroup.Path)
	}
	if s := stopWithin(t, xdg, "inner"); !s.StopConfirmed {
		t.Errorf("the session's stop was not confirmed: %+v", s.Evidence)
	}
	assertNoSurvivors(t)
}
