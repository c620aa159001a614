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
		// The watcher read every stop-*.json before acting on the wake-up;
		// this one sorts first.
		{"request file a FIFO", `mkfifo "$TETHER_SESSION_DIR/stop-0-planted.json"`},
		{"runtime dir removed", `rm -rf "$TETHER_SESSION_DIR"`},
		{"runtime dir chmod 750", `chmod 750 "$TETHER_SESSION_DIR"`},
		{"runtime dir replaced by a symlink", `mv "$TETHER_SESSION_DIR" "$TETHER_SESSION_DIR.moved" && ln -s /tmp "$TETHER_SESSION_DIR"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xdg := stateEnv(t)
			s := filepath.Join(xdg, "tether", "s")
			ready := filepath.Join(xdg, "ready")
			mustStart(t, xdg, nil, "-q", "--name", "w", "-e", "READY="+ready, "--", "sh", "-c", tt.setup+"; "+sleep)
			awaitFile(t, ready, nil)
			r := stopWithin(t, xdg, "--grace", "200ms", "w")
			if !r.StopConfirmed || r.Stop.Reason != "request" || r.Exit.Signal != "SIGKILL" {
				t.Errorf("receipt: confirmed %t, stop %+v, exit %+v; want confirmed, request, main killed", r.StopConfirmed, r.Stop, r.Exit)
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
		stopWithin(t, xdg, "k")
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
