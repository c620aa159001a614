package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/version"
)

// checkOrigin checks what a receipt says about where it came from against
// this machine and this binary's build info (a go test binary records no
// commit, so revision is empty here; a go build stamps it).
func checkOrigin(t *testing.T, r *receipt.Receipt) {
	t.Helper()
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(r.RunID) {
		t.Errorf("receipt run_id = %q, want 32 lowercase hex digits", r.RunID)
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if r.Host.BootID != strings.TrimSpace(string(boot)) || r.Host.BootID == "" {
		t.Errorf("receipt host.boot_id = %q, want %q", r.Host.BootID, boot)
	}
	v := version.Get()
	got := r.Tether
	got.Executable = nil
	if want := (receipt.Tether{Version: v.Version, Revision: v.Revision, Modified: v.Modified}); got != want {
		t.Errorf("receipt tether = %+v, want %+v", r.Tether, want)
	}
	// A run's and a session's (the golden receipts hold it); reap writes
	// none, not having run the program.
	if exe, _ := os.Executable(); r.Tether.Executable != nil && (r.Tether.Executable.Path != exe || len(r.Tether.Executable.SHA256) != 64) {
		t.Errorf("receipt tether.executable = %+v, want this binary, %s, with its digest", r.Tether.Executable, exe)
	}
}

// TestRunIDEverywhere (issue 11): one run id names a run in its receipt,
// its registry record and its command's environment, and the same for a
// session (record, status, stop receipt).
func TestRunIDEverywhere(t *testing.T) {
	t.Run("run", func(t *testing.T) {
		xdg := stateEnv(t)
		dir := t.TempDir()
		rcpt := filepath.Join(dir, "receipt.json")
		// The run's record exists while the command runs; it is removed
		// once the stop is confirmed.
		code, _, stderr := tetherIn(t, xdg, []string{"D=" + dir}, append([]string{"run", "--receipt", rcpt, "--"},
			sh(`printf %s "$TETHER_RUN_ID" > "$D/env" && cp "$XDG_RUNTIME_DIR"/tether/records/run-*.json "$D/record.json"`)...)...)
		if code != 0 {
			t.Fatalf("tether run = %d: %s", code, stderr)
		}
		r, _ := readReceipt(t, rcpt)
		checkOrigin(t, r)
		env, _ := os.ReadFile(filepath.Join(dir, "env"))
		var rec registry.Record
		if b, err := os.ReadFile(filepath.Join(dir, "record.json")); err != nil || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("the run's record, as the command saw it: %v: %s", err, b)
		}
		if string(env) != r.RunID || rec.RunID != r.RunID {
			t.Errorf("$TETHER_RUN_ID = %q, record run_id = %q, want the receipt's run_id %q", env, rec.RunID, r.RunID)
		}
	})
	t.Run("session", func(t *testing.T) {
		cgroupParent(t)
		xdg := stateEnv(t)
		envFile := filepath.Join(t.TempDir(), "env")
		name := mustStart(t, xdg, nil, "--owner", "none", "--", "sh", "-c", `printf %s "$TETHER_RUN_ID" > "$0"; exec sleep 1000`, envFile)
		st := statusOf(t, xdg, name)
		deadline := time.Now().Add(10 * time.Second)
		for _, err := os.Stat(envFile); err != nil && time.Now().Before(deadline); _, err = os.Stat(envFile) {
			time.Sleep(10 * time.Millisecond)
		}
		if code, _, stderr := tetherIn(t, xdg, nil, "stop", name); code != 0 {
			t.Fatalf("tether stop %s = %d: %s", name, code, stderr)
		}
		r, _ := readReceipt(t, statusOf(t, xdg, name).Receipt)
		checkOrigin(t, r)
		env, _ := os.ReadFile(envFile)
		if st.RunID != r.RunID || string(env) != r.RunID {
			t.Errorf("status run_id = %q, $TETHER_RUN_ID = %q, want the receipt's run_id %q", st.RunID, env, r.RunID)
		}
		// The log's header names the run too.
		if b, err := os.ReadFile(st.Log); err != nil || !strings.Contains(strings.SplitN(string(b), "\n", 2)[0], " # tether-log 1 seq=0 run="+r.RunID) {
			t.Errorf("log %s header = %q (%v), want run=%s", st.Log, strings.SplitN(string(b), "\n", 2)[0], err, r.RunID)
		}
		assertNoSurvivors(t)
	})
	t.Run("reap", func(t *testing.T) {
		cgroupParent(t)
		xdg := stateEnv(t)
		// A daemon outlives the killed supervisor, so that reap has a
		// leaf to stop (as in TestReceiptsAreReplaced).
		// No watcher: it would stop the session first (issue 24).
		name := mustStart(t, xdg, []string{"TETHER_NO_WATCH=1"}, "--owner", "none", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
		st := statusOf(t, xdg, name)
		awaitProcs(t, xdg, name, 3)
		killSupervisor(t, xdg, name)
		if code, _, stderr := tetherIn(t, xdg, nil, "reap"); code != 0 {
			t.Fatalf("tether reap = %d: %s", code, stderr)
		}
		r, _ := readReceipt(t, filepath.Join(xdg, "tether", "receipts", name+"@"+st.RunID+".json"))
		checkOrigin(t, r)
		if r.RunID != st.RunID || st.RunID == "" {
			t.Errorf("reap receipt run_id = %q, want the session's %q", r.RunID, st.RunID)
		}
		assertNoSurvivors(t)
	})
}
