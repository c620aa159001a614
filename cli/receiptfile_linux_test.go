package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// plantReceiptLink puts a symlink where the session's receipt will be
// written, pointing at a file of the test's, and returns that file.
func plantReceiptLink(t *testing.T, xdg, name string) string {
	t.Helper()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("not a receipt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(xdg, "tether", "receipts", name+".json")); err != nil {
		t.Fatal(err)
	}
	return victim
}

// checkReceiptReplaced checks that the receipt at the session's receipt
// path is a regular file with a receipt, and that victim was not written.
func checkReceiptReplaced(t *testing.T, xdg, name, victim string) {
	t.Helper()
	p := filepath.Join(xdg, "tether", "receipts", name+".json")
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		t.Errorf("receipt %s: %v, %v; want a regular file replacing the link", p, st, err)
	} else if b, _ := os.ReadFile(p); !json.Valid(b) {
		t.Errorf("receipt %s = %q, want JSON", p, b)
	}
	if b, _ := os.ReadFile(victim); string(b) != "not a receipt\n" {
		t.Errorf("the file a planted link pointed to was written through: %.80q", b)
	}
}

// TestReceiptsAreReplaced (issue 9): session and reap receipts are
// written atomically (temp file and rename), so a file in their place is
// replaced and never written through or left torn.
func TestReceiptsAreReplaced(t *testing.T) {
	cgroupParent(t)
	t.Run("session", func(t *testing.T) {
		xdg := stateEnv(t)
		name := mustStart(t, xdg, nil, "--name", "atomic", "--owner", "none", "--", "sleep", "1000")
		victim := plantReceiptLink(t, xdg, name)
		if code, _, stderr := tetherIn(t, xdg, nil, "stop", name); code != 0 {
			t.Fatalf("tether stop = %d: %s", code, stderr)
		}
		checkReceiptReplaced(t, xdg, name, victim)
		assertNoSurvivors(t)
	})
	t.Run("reap", func(t *testing.T) {
		xdg := stateEnv(t)
		// A daemon outlives the supervisor (the main process dies of its
		// parent-death signal), so the leaf is still there for reap to
		// stop, also under systemd, where an emptied scope would vanish.
		name := mustStart(t, xdg, nil, "--name", "atomic", "--owner", "none", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
		awaitProcs(t, xdg, name, 3)
		killSupervisor(t, xdg, name)
		victim := plantReceiptLink(t, xdg, name)
		if code, _, stderr := tetherIn(t, xdg, nil, "reap"); code != 0 {
			t.Fatalf("tether reap = %d: %s", code, stderr)
		}
		checkReceiptReplaced(t, xdg, name, victim)
		assertNoSurvivors(t)
	})
}
