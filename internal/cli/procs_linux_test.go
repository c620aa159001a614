package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/testuser"
	"github.com/tether-run/tether/receipt"
)

// nobodyUID is the uid (and gid) the unprivileged tests run tether as.
const nobodyUID = 65534

// marked returns the live processes (not zombies) whose environment holds
// caseEnv=m, with their command lines.
func marked(m string) map[int]string { return leakcheck.Find(caseEnv, m) }

// killMarked SIGKILLs whatever still carries marker m.
func killMarked(m string) {
	for range 10 {
		procs := marked(m)
		if len(procs) == 0 {
			return
		}
		for pid := range procs {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// assertNoSurvivors fails t if any process started by t is still alive.
// It looks once, on purpose: tether has returned, and a stop it confirmed
// leaves nothing to wait for.
func assertNoSurvivors(t *testing.T) {
	t.Helper()
	for pid, cmdline := range marked(marker(t)) {
		t.Errorf("survivor after tether returned: pid %d %q", pid, cmdline)
	}
}

// readReceipt reads and decodes the receipt at path, failing t if it
// is missing, malformed, or carries a null anywhere.
func readReceipt(t *testing.T, path string) (*receipt.Receipt, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("receipt: %v", err)
	}
	var r receipt.Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("receipt %s: %v\n%s", path, err, b)
	}
	for _, p := range nullPaths(t, b) {
		t.Errorf("receipt %s = null, want a value (an empty list for a list)", p)
	}
	return &r, b
}

// nullPaths returns the JSON paths of the null values in b.
func nullPaths(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("json: %v", err)
	}
	var out []string
	var walk func(string, any)
	walk = func(p string, v any) {
		switch v := v.(type) {
		case nil:
			out = append(out, p)
		case map[string]any:
			for k, x := range v {
				walk(p+"."+k, x)
			}
		case []any:
			for i, x := range v {
				walk(fmt.Sprintf("%s[%d]", p, i), x)
			}
		}
	}
	walk("$", v)
	return out
}

// leafParent returns where tether creates its leaves when given no
// --cgroup-parent ($TETHER_CGROUP_PARENT, else our own cgroup), or why
// this user may not create leaves there.
func leafParent() (string, error) {
	p := os.Getenv("TETHER_CGROUP_PARENT")
	if p == "" {
		h, err := delegate.Parent(context.Background())
		if err != nil {
			return "", err
		}
		p = h.Dir
	}
	return p, cgroup.CheckParent(p)
}

// cgroupParent returns leafParent, skipping t when it is not usable.
func cgroupParent(t *testing.T) string {
	t.Helper()
	p, err := leafParent()
	if err != nil {
		t.Skipf("needs a writable cgroup v2 parent: %v", err)
	}
	return p
}

// testParent creates a cgroup owned by t under cgroupParent, for runs
// whose leaves must be counted without seeing other tests' leaves. Its name
// does not start with cgroup.LeafPrefix. Cleanup kills and removes
// whatever a failed run left in it, then removes it.
func testParent(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(cgroupParent(t), "tethertest-")
	if err != nil {
		t.Fatalf("create test cgroup: %v", err)
	}
	t.Cleanup(func() {
		for _, l := range leaves(dir) {
			os.WriteFile(filepath.Join(l, "cgroup.kill"), []byte("1"), 0)
			for range 100 {
				if os.Remove(l) == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove test cgroup: %v", err)
		}
	})
	return dir
}

// leaves lists the tether leaves directly under dir.
func leaves(dir string) []string {
	out, _ := filepath.Glob(filepath.Join(dir, cgroup.LeafPrefix+"*"))
	return out
}

// needRoot skips t unless it runs as root.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run tether as another user")
	}
}

// publicDir returns a fresh directory that every user can read and enter,
// and write when writable is set.
func publicDir(t *testing.T, writable bool) string {
	t.Helper()
	dir := testuser.PublicDir(t)
	if writable {
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// nobodyCmd is tetherCmd for tether run as uid nobodyUID. The test binary
// lives in a 0700 build directory, so a copy is run from a public one.
func nobodyCmd(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	needRoot(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := publicDir(t, false)
	cp := filepath.Join(dir, "tether")
	if err := copyFile(cp, exe, 0o755); err != nil {
		t.Fatalf("copy test binary: %v", err)
	}
	cmd, stdout, stderr := tetherCmd(t, args...)
	cmd.Path, cmd.Args[0] = cp, cp
	cmd.Dir = dir
	cmd.Env = withoutEnv(cmd.Env, "TETHER_CGROUP_PARENT")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{}}}
	return cmd, stdout, stderr
}

// copyFile copies src to a new file dst, holding forkMu so that no child
// inherits the write fd (see forkMu).
func copyFile(dst, src string, perm os.FileMode) error {
	forkMu.Lock()
	defer forkMu.Unlock()
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, perm)
}

// writableBy reports whether uid may create entries in dir, judged from
// its owner and mode bits (uid is never root here).
func writableBy(dir string, uid int) bool {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return false
	}
	switch {
	case int(st.Uid) == uid:
		return st.Mode&0o200 != 0
	default:
		return st.Mode&0o002 != 0
	}
}

// startTether starts cmd and returns a channel that yields its exit code
// once it has exited.
func startTether(t *testing.T, cmd *exec.Cmd) <-chan int {
	t.Helper()
	if err := startCmd(cmd); err != nil {
		t.Fatalf("start tether: %v", err)
	}
	done := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
			done <- 0
		case errors.As(err, &ee) && ee.Exited():
			done <- ee.ExitCode()
		default:
			done <- -1 // killed by a signal, or the deadline; reported by the caller
		}
	}()
	return done
}

// awaitFile polls for path until it exists. It fails t if tether exits
// first or the run deadline passes; the deadline guards a hang and is not
// an assertion on how long anything takes.
func awaitFile(t *testing.T, path string, done <-chan int) {
	t.Helper()
	deadline := time.Now().Add(runDeadline)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case code := <-done:
			t.Fatalf("tether exited (code %d) before %s appeared", code, filepath.Base(path))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", filepath.Base(path))
		}
	}
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
