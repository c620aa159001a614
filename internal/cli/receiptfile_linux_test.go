package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	if err := os.Symlink(victim, receiptOf(t, xdg, name)); err != nil {
		t.Fatal(err)
	}
	return victim
}

// receiptOf is where the receipt of session name's newest run goes.
func receiptOf(t *testing.T, xdg, name string) string {
	t.Helper()
	return filepath.Join(xdg, "tether", "receipts", name+"@"+statusOf(t, xdg, name).RunID+".json")
}

// checkReceiptReplaced checks that the receipt at the session's receipt
// path is a regular file with a receipt, and that victim was not written.
func checkReceiptReplaced(t *testing.T, xdg, name, victim string) {
	t.Helper()
	p := receiptOf(t, xdg, name)
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
		// No watcher: it would stop the session at the supervisor's death,
		// before reap (issue 24); this is reap's receipt.
		name := mustStart(t, xdg, []string{"TETHER_NO_WATCH=1"}, "--name", "atomic", "--owner", "none", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
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

// TestRunReceiptNeverOverwrites (issue 11): --receipt FILE refuses an
// existing FILE, a symlink included (not followed), with exit 125 before
// the command starts, and leaves it as it was; --receipt-overwrite
// replaces it (the link itself, never its target).
func TestRunReceiptNeverOverwrites(t *testing.T) {
	for _, plant := range []string{"file", "symlink", "dangling symlink"} {
		for _, overwrite := range []bool{false, true} {
			name := plant
			if overwrite {
				name += "/overwrite"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				rcpt, victim, ran := filepath.Join(dir, "receipt.json"), filepath.Join(dir, "victim"), filepath.Join(dir, "ran")
				os.WriteFile(victim, []byte("not a receipt\n"), 0o600)
				switch plant {
				case "file":
					os.WriteFile(rcpt, []byte("not a receipt\n"), 0o600)
				case "symlink":
					os.Symlink(victim, rcpt)
				case "dangling symlink":
					os.Symlink(victim+".missing", rcpt)
				}
				args := []string{"run", "--receipt", rcpt}
				if overwrite {
					args = append(args, "--receipt-overwrite")
				}
				code, _, stderr := tether(t, append(args, "--", "touch", ran)...)
				_, ranErr := os.Stat(ran)
				if b, _ := os.ReadFile(victim); string(b) != "not a receipt\n" {
					t.Errorf("the symlink's target was written through: %.80q", b)
				}
				if _, err := os.Stat(victim + ".missing"); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a dangling symlink's target was created (%v)", err)
				}
				if !overwrite {
					if code != 125 || ranErr == nil || !strings.Contains(stderr, "--receipt-overwrite") {
						t.Errorf("tether run --receipt EXISTING = exit %d (command ran: %t), stderr %q; want 125 before the command, naming --receipt-overwrite", code, ranErr == nil, stderr)
					}
					if st, err := os.Lstat(rcpt); err != nil || (plant == "file") != st.Mode().IsRegular() {
						t.Errorf("the existing %s was replaced: %v, %v", plant, st, err)
					} else if b, _ := os.ReadFile(rcpt); plant == "file" && string(b) != "not a receipt\n" {
						t.Errorf("the existing file was written: %.80q", b)
					}
					return
				}
				if code != 0 || ranErr != nil {
					t.Fatalf("tether run --receipt-overwrite = exit %d (command ran: %t); stderr: %s", code, ranErr == nil, stderr)
				}
				if st, err := os.Lstat(rcpt); err != nil || !st.Mode().IsRegular() {
					t.Errorf("receipt %s = %v, %v; want a regular file in place of the %s", rcpt, st, err, plant)
				}
				r, _ := readReceipt(t, rcpt)
				checkOrigin(t, r)
			})
		}
	}
}

// TestRunReceiptReserved: the receipt file exists (empty) from before the
// command starts, so a FILE that cannot be written fails the run before
// anything runs, and the end only replaces what tether created.
func TestRunReceiptReserved(t *testing.T) {
	dir := t.TempDir()
	rcpt := filepath.Join(dir, "receipt.json")
	code, stdout, stderr := tether(t, "run", "--receipt", rcpt, "--", "sh", "-c", `wc -c < "$0"`, rcpt)
	if code != 0 || strings.TrimSpace(stdout) != "0" {
		t.Fatalf("tether run = exit %d, the command saw %q bytes at FILE; want 0 and an empty placeholder; stderr: %s", code, stdout, stderr)
	}
	r, _ := readReceipt(t, rcpt)
	checkOrigin(t, r)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("dir has %d entries, want the receipt only (no temp file left)", len(ents))
	}

	// Unwritable: refused before the command runs. /proc takes no new
	// files, also from root, whom access(2) tells it may write there.
	ran := filepath.Join(dir, "ran")
	code, _, stderr = tether(t, "run", "--receipt", "/proc/tether-receipt.json", "--", "touch", ran)
	if _, err := os.Stat(ran); code != 125 || err == nil {
		t.Errorf("tether run --receipt UNWRITABLE = exit %d (command ran: %t), stderr %q; want 125 before the command", code, err == nil, stderr)
	}
}

// TestRunReceiptOverwriteNeedsReceipt: the flag alone is a usage error.
func TestRunReceiptOverwriteNeedsReceipt(t *testing.T) {
	if code, _, stderr := tether(t, "run", "--receipt-overwrite", "--", "true"); code != 125 || !strings.Contains(stderr, "--receipt") {
		t.Errorf("tether run --receipt-overwrite (no --receipt) = exit %d, stderr %q; want 125 naming --receipt", code, stderr)
	}
}

// TestRunReceiptHonoursUmask (issue 22): --receipt FILE comes out as any
// file the caller's commands create, 0666 less the umask, whether tether
// reserved the name or replaced a file there (--receipt-overwrite). It
// was 0644 whatever the umask.
func TestRunReceiptHonoursUmask(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("no sh: %v", err)
	}
	for _, umask := range []int{0o077, 0o022, 0o002} {
		for _, overwrite := range []bool{false, true} {
			t.Run(fmt.Sprintf("umask %03o/overwrite %t", umask, overwrite), func(t *testing.T) {
				rcpt := filepath.Join(t.TempDir(), "receipt.json")
				args := []string{"run", "-q", "--receipt", rcpt}
				if overwrite {
					os.WriteFile(rcpt, nil, 0o600)
					args = append(args, "--receipt-overwrite")
				}
				cmd, _, stderr := tetherCmd(t, append(args, "--", "true")...)
				// The shell sets the umask of the process that becomes
				// tether: Go's SysProcAttr has no umask.
				cmd.Args = append([]string{"sh", "-c", fmt.Sprintf(`umask %03o && exec "$0" "$@"`, umask), cmd.Path}, cmd.Args[1:]...)
				cmd.Path = sh
				if code := wait(t, cmd); code != 0 {
					t.Fatalf("tether %s = exit %d: %s", strings.Join(args, " "), code, stderr)
				}
				st, err := os.Stat(rcpt)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := st.Mode().Perm(), os.FileMode(0o666&^umask); got != want {
					t.Errorf("receipt mode under umask %03o = %v, want %v", umask, got, want)
				}
				readReceipt(t, rcpt)
			})
		}
	}
}

// TestRunReceiptFD: --receipt-fd N writes the receipt to a descriptor the
// caller opened (here a pipe as fd 3), apart from the command's stdout,
// and the command does not inherit it; a descriptor not open, open only
// for reading, or one of 0-2 is refused before anything runs.
func TestRunReceiptFD(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd, stdout, stderr := tetherCmd(t, "run", "-q", "--receipt-fd", "3", "--", "sh", "-c",
		`echo out; if [ -e /proc/self/fd/3 ]; then echo inherited; else echo not-inherited; fi`)
	cmd.ExtraFiles = []*os.File{w}
	if err := startCmd(cmd); err != nil {
		t.Fatal(err)
	}
	w.Close()
	b, _ := io.ReadAll(r)
	if code := wait(t, cmd); code != 0 || stdout.String() != "out\nnot-inherited\n" {
		t.Errorf("tether run --receipt-fd 3 = %d, stdout %q (%s), want the command's output only, fd 3 not inherited", code, stdout, stderr)
	}
	var rc struct {
		RunID string `json:"run_id"`
		Stop  struct {
			Confirmed bool `json:"confirmed"`
		} `json:"stop"`
	}
	if err := json.Unmarshal(b, &rc); err != nil || rc.RunID == "" {
		t.Errorf("fd 3 got %q (%v), want the receipt", b, err)
	}

	ro, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for _, c := range []struct {
		fd    string
		extra []*os.File
		want  string
	}{
		{"3", nil, "not open"},
		{"3", []*os.File{ro}, "not open for writing"},
		{"1", nil, "3 or more"},
	} {
		cmd, stdout, stderr := tetherCmd(t, "run", "--receipt-fd", c.fd, "--", "echo", "ran")
		cmd.ExtraFiles = c.extra
		if code := wait(t, cmd); code != 125 || stdout.Len() != 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("tether run --receipt-fd %s (%d extra files) = %d, %q (%s), want 125 saying %q and nothing run", c.fd, len(c.extra), code, stdout, stderr, c.want)
		}
	}
}
