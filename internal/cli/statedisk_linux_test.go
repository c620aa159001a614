package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
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
	// 3 MB of 100-byte lines into a 2 MB log (lines of "y" cost the log
	// per line, and took over 30 s under TCG); head's status says whether
	// it was killed (141: SIGPIPE) for writing to its output.
	name := mustStart(t, xdg, nil, "--name", "full", "--owner", "none", "--",
		"sh", "-c", `yes 012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789012345678 | head -c 3000000; echo $? > "$1.tmp"; mv "$1.tmp" "$1"; exec sleep 1000`, "sh", status)
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
	// The disk is still full: the gap could not be marked in the log, and
	// tether logs says what the record knows.
	if code, out, stderr := tetherIn(t, xdg, nil, "logs", name); code != 0 || !strings.HasPrefix(out, "0123456789") || !strings.Contains(stderr, "dropped") || !strings.Contains(stderr, "no space left") {
		t.Errorf("tether logs = exit %d, %d bytes, stderr %q; want 0, the lines kept, and the drop reported", code, len(out), stderr)
	}
	assertNoSurvivors(t)
}

// stateDiskFault gives t a state dir (XDG_RUNTIME_DIR/tether) on a small
// tmpfs, set up by `tether ls`, then fills it (fault "enospc") or makes
// it read-only ("erofs").
func stateDiskFault(t *testing.T, fault string) (xdg string) {
	t.Helper()
	xdg = stateEnv(t)
	dir := filepath.Join(xdg, "tether")
	mountTmpfs(t, dir, "2m")
	if code, _, stderr := tetherIn(t, xdg, nil, "ls"); code != 0 {
		t.Fatalf("tether ls = %d: %s", code, stderr)
	}
	switch fault {
	case "enospc":
		fill(t, dir)
	case "erofs":
		if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			t.Fatalf("remount %s read-only: %v", dir, err)
		}
	}
	return xdg
}

// fill fills the filesystem of dir with a file dir/ballast.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "ballast"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("fill %s: %v, want ENOSPC", dir, err)
			}
			return
		}
	}
}

// faultErrors is what each state disk fault reads as.
var faultErrors = map[string]string{"enospc": "no space left on device", "erofs": "read-only file system"}

// TestRunStateDiskFault: with the state dir full or read-only, tether run
// runs without a record, says so, and still stops everything and writes
// its receipt (docs/faults.md).
func TestRunStateDiskFault(t *testing.T) {
	cgroupParent(t)
	for _, fault := range []string{"enospc", "erofs"} {
		t.Run(fault, func(t *testing.T) {
			xdg := stateDiskFault(t, fault)
			rcpt := filepath.Join(t.TempDir(), "receipt.json")
			code, _, stderr := tetherIn(t, xdg, nil, append([]string{"run", "--receipt", rcpt, "--"}, sh(daemonScript)...)...)
			if code != 0 || !strings.Contains(stderr, "no run record") || !strings.Contains(stderr, faultErrors[fault]) {
				t.Errorf("tether run with the state dir %s = exit %d, stderr %q; want 0 and a warning that it runs without a record", fault, code, stderr)
			}
			r, _ := readReceipt(t, rcpt)
			checkStopped(t, r, "cgroup")
			if recs := runRecords(xdg); len(recs) != 0 {
				t.Errorf("run records: %v, want none", recs)
			}
		})
	}
}

// TestStartStateDiskFault: with the state dir full or read-only, tether
// start fails with the cause and leaves nothing: no process, no runtime
// dir, no record.
func TestStartStateDiskFault(t *testing.T) {
	for _, fault := range []string{"enospc", "erofs"} {
		t.Run(fault, func(t *testing.T) {
			xdg := stateDiskFault(t, fault)
			code, _, stderr := tetherIn(t, xdg, nil, "start", "--name", "nospace", "--owner", "none", "--", "sleep", "1000")
			if code != 1 || !strings.Contains(stderr, faultErrors[fault]) {
				t.Errorf("tether start with the state dir %s = exit %d, stderr %q; want 1 and the cause", fault, code, stderr)
			}
			for _, p := range []string{"s/nospace", "records/nospace.json", "ended/nospace.json"} {
				if exists(filepath.Join(xdg, "tether", p)) {
					t.Errorf("%s left behind by a start that failed", p)
				}
			}
			assertNoSurvivors(t)
		})
	}
}

// TestSessionStateDiskFills: a session whose state disk fills while it
// runs keeps running; tether stop still stops it (the stop request cannot
// be written, the signal alone is enough) and says that the end could not
// be recorded; once there is space, tether reap records it, and status
// shows it.
func TestSessionStateDiskFills(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	dir := filepath.Join(xdg, "tether")
	mountTmpfs(t, dir, "2m")
	name := mustStart(t, xdg, nil, "--name", "filling", "--owner", "none", "--", "sh", "-c", "while :; do echo tick; sleep 0.01; done")
	fill(t, dir)
	s := statusOf(t, xdg, name)
	if s.State != registry.StateRunning || s.Procs < 1 {
		t.Fatalf("with the state disk full: state %s, procs %d; want running", s.State, s.Procs)
	}
	code, _, stderr := tetherIn(t, xdg, nil, "stop", name)
	if code != 1 || !strings.Contains(stderr, "no space left on device") || !strings.Contains(stderr, "tether reap") {
		t.Errorf("tether stop with the state disk full = exit %d, stderr %q; want 1, the cause, and tether reap", code, stderr)
	}
	assertNoSurvivors(t)
	if exists(s.Cgroup) {
		t.Errorf("leaf %s left after the stop", s.Cgroup)
	}
	if err := os.Remove(filepath.Join(dir, "ballast")); err != nil {
		t.Fatal(err)
	}
	if code, out, stderr := tetherIn(t, xdg, nil, "reap"); code != 0 {
		t.Errorf("tether reap = %d: %s%s", code, out, stderr)
	}
	if s := statusOf(t, xdg, name); s.State != registry.StateStopped {
		t.Errorf("after tether reap: state %s, want stopped", s.State)
	}
	if code, out, stderr := tetherIn(t, xdg, nil, "status", name); code != 0 || !strings.Contains(out, "stopped:") {
		t.Errorf("tether status of a session reap finished = exit %d, %q %q; want its state", code, out, stderr)
	}
}
