package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
	"golang.org/x/sys/unix"
)

// mountTmpfs mounts a tmpfs of size (as mount(8) takes it: 2m) on dir,
// creating dir 0700, and detaches it when t ends. Mounting needs root.
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+size+",mode=0700"); err != nil {
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	// Detached, not unmounted: a supervisor stopped by a later cleanup
	// may still hold a file open in it.
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
}

// awaitPath waits for path to exist; the bound is a hang guard.
func awaitPath(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(runDeadline); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if exists(path) {
			return
		}
	}
	t.Fatalf("%s did not appear", path)
}

// TestSessionLogDiskFull (issue 9, bug 2): when the session's log cannot
// be written (its disk is full), the session's command is not disturbed:
// its output goes on being read, what is dropped is counted, and the
// record, status and receipt say so.
func TestSessionLogDiskFull(t *testing.T) {
	xdg := stateEnv(t)
	mountTmpfs(t, filepath.Join(xdg, "tether", "logs"), "2m")
	status := filepath.Join(t.TempDir(), "status")
	// 3 MB of "y\n" into a 2 MB log; head's status says whether it was
	// killed (141: SIGPIPE) for writing to its output.
	name := mustStart(t, xdg, nil, "--name", "full", "--owner", "none", "--",
		"sh", "-c", `yes | head -c 3000000; echo $? > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 1000`, "sh", status)
	awaitPath(t, status)
	if b, _ := os.ReadFile(status); strings.TrimSpace(string(b)) != "0" {
		t.Errorf("the session's writer exited %s with its log's disk full, want 0 (not killed by SIGPIPE)", strings.TrimSpace(string(b)))
	}
	var loss *receipt.OutputLoss
	for deadline := time.Now().Add(runDeadline); loss == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		loss = statusOf(t, xdg, name).OutputLoss
	}
	if loss == nil {
		t.Fatalf("tether status --json: output_loss never set while the log's disk was full")
	}
	if loss.DroppedBytes <= 0 || loss.DroppedBytes >= 3000000 || loss.DroppedLines <= 0 || !strings.Contains(loss.Error, "no space left") {
		t.Errorf("output_loss = %+v, want some (not all) of 3000000 bytes and their lines dropped, with ENOSPC", loss)
	}
	if _, out, _ := tetherIn(t, xdg, nil, "status", name); !strings.Contains(out, "output lost: ") {
		t.Errorf("tether status = %q, want an \"output lost:\" line", out)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", name); code != 0 {
		t.Fatalf("tether stop = %d: %s", code, stderr)
	}
	s := statusOf(t, xdg, name)
	if s.State != registry.StateStopped || s.OutputLoss == nil || s.OutputLoss.DroppedBytes < loss.DroppedBytes {
		t.Errorf("after stop: state %s, output_loss %+v; want stopped with at least %d bytes lost", s.State, s.OutputLoss, loss.DroppedBytes)
	}
	r, _ := readReceipt(t, s.Receipt)
	if r.OutputLoss == nil || r.OutputLoss.DroppedBytes != s.OutputLoss.DroppedBytes || !r.StopConfirmed {
		t.Errorf("receipt output_loss = %+v, stop_confirmed %t; want the record's %+v, confirmed", r.OutputLoss, r.StopConfirmed, s.OutputLoss)
	}
	assertNoSurvivors(t)
}
