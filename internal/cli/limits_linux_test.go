package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/testuser"
)

func TestRunLimitsBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"size syntax", []string{"--memory", "12X"}, "--memory"},
		{"negative size", []string{"--memory", "-1G"}, "--memory"},
		{"zero memory", []string{"--memory", "0"}, "more than 0"},
		{"high above max", []string{"--memory", "1G", "--memory-high", "2G"}, "above --memory"},
		{"cpus syntax", []string{"--cpus", "two"}, "--cpus"},
		{"negative cpus", []string{"--cpus", "-1"}, "--cpus"},
		{"pids syntax", []string{"--pids", "1.5"}, "--pids"},
		{"zero pids", []string{"--pids", "0"}, "--pids"},
		{"limits mode", []string{"--limits", "sometimes"}, "--limits"},
		{"require-free syntax", []string{"--require-free", "/tmp"}, "PATH=SIZE"},
		{"require-free size", []string{"--require-free", "/tmp=lots"}, "--require-free"},
		{"require-free missing path", []string{"--require-free", "/nonexistent-tether=1K"}, "statfs"},
		{"not enough free space", []string{"--require-free", "/=1000000T"}, "only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := testParent(t)
			started := filepath.Join(t.TempDir(), "started")
			args := append(append([]string{"run", "--cgroup-parent", parent}, tt.args...), "--", "touch", started)
			code, _, stderr := tether(t, args...)
			if code != 125 || !strings.HasPrefix(stderr, "tether: ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("tether %s = %d, stderr %q; want 125 and a message with %q", strings.Join(tt.args, " "), code, stderr, tt.want)
			}
			if exists(started) {
				t.Errorf("the command ran")
			}
			if l := leaves(parent); len(l) > 0 {
				t.Errorf("leaves left: %v", l)
			}
		})
	}
}

func TestRunMemoryLimitOOM(t *testing.T) {
	if _, err := cgroup.V1Parent("memory"); err != nil {
		if b, _ := os.ReadFile(cgroupParent(t) + "/cgroup.controllers"); !strings.Contains(string(b), "memory") {
			t.Skip("no memory controller tether can use here")
		}
	}
	receipt := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := tether(t, "run", "--memory", "64M", "--receipt", receipt, "--", "python3", "-c", "x = b'a' * (400 << 20)")
	if code != 137 || !strings.Contains(stderr, "OOM-killed") {
		t.Errorf("tether run --memory 64M (allocating 400M) = %d, stderr %q; want 137 and OOM-killed", code, stderr)
	}
	r, _ := readReceipt(t, receipt)
	if !r.Exit.OOMKilled || r.Limits == nil || r.Limits.Outcome == nil || r.Limits.Outcome.OOMKills < 1 || !r.StopConfirmed {
		t.Errorf("receipt exit %+v limits %+v confirmed %t", r.Exit, r.Limits, r.StopConfirmed)
	}
	assertNoSurvivors(t)
}

// TestRunLimitAboveParent starts tether inside a v1 memory cgroup limited
// to 256M and asks for 1G: refused before start, with both numbers.
func TestRunLimitAboveParent(t *testing.T) {
	needRoot(t)
	own, err := cgroup.V1Parent("memory")
	if err != nil {
		limitAboveV2Parent(t)
		return
	}
	dir, err := os.MkdirTemp(own, "tethertest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte("268435456"), 0); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(t.TempDir(), "started")
	cmd, _, stderr := tetherCmd(t, "run", "--memory", "1G", "--", "touch", started)
	// Join the limited cgroup, then become tether.
	exe := cmd.Path
	cmd.Path = "/bin/sh"
	cmd.Args = append([]string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, dir, exe}, cmd.Args[1:]...)
	code := wait(t, cmd)
	if code != 125 || !strings.Contains(stderr.String(), "--memory 1G is above the limit of 256M") {
		t.Errorf("tether run --memory 1G under a 256M parent = %d, stderr %q; want 125 with both numbers", code, stderr)
	}
	if exists(started) {
		t.Error("the command ran")
	}
}

func TestRunLimitUnavailable(t *testing.T) {
	parent := testParent(t)
	if b, _ := os.ReadFile(parent + "/cgroup.controllers"); strings.Contains(string(b), "memory") {
		// This host offers memory in v2 (and so memory.high): go one level
		// down, where the test cgroup does not pass it on.
		parent = filepath.Join(parent, "nomemory")
		if err := os.Mkdir(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(parent) })
	}
	started := filepath.Join(t.TempDir(), "started")
	code, _, stderr := tether(t, "run", "--cgroup-parent", parent, "--memory-high", "32M", "--", "touch", started)
	if code != 125 || !strings.Contains(stderr, "memory") || exists(started) {
		t.Errorf("strict --memory-high without a controller = %d, stderr %q, started %t; want 125, nothing started", code, stderr, exists(started))
	}
	if l := leaves(parent); len(l) > 0 {
		t.Errorf("leaves left: %v", l)
	}
	receipt := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr = tether(t, "run", "--cgroup-parent", parent, "--limits", "best-effort", "--memory-high", "32M", "--receipt", receipt, "--", "touch", started)
	if code != 0 || !strings.Contains(stderr, "limit not applied: --memory-high 32M") || !exists(started) {
		t.Errorf("best-effort = %d, stderr %q; want 0, a warning, and the command run", code, stderr)
	}
	r, _ := readReceipt(t, receipt)
	if r.Limits == nil || r.Limits.Mode != "best-effort" || len(r.Limits.NotApplied) != 1 || r.Limits.NotApplied[0].Name != "memory_high" {
		t.Errorf("receipt limits = %+v", r.Limits)
	}
}

// testUser returns the uid and gid of a system user for the delegation
// test (testuser.Ensure; it needs root).
func testUser(t *testing.T) (int, int) {
	t.Helper()
	needRoot(t)
	return testuser.Ensure(t, "tether-test")
}

// TestRunDelegatedUser delegates a cgroup v2 subtree to an ordinary user
// the standard way (chown of the directory, cgroup.procs,
// cgroup.subtree_control and cgroup.threads) and runs tether as that user
// inside it: full containment, without root.
func TestRunDelegatedUser(t *testing.T) {
	uid, gid := testUser(t)
	deleg := testParent(t)
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		if err := os.Chown(filepath.Join(deleg, f), uid, gid); err != nil {
			t.Fatalf("delegate %s: %v", f, err)
		}
	}
	fd, err := syscall.Open(deleg, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)

	run := func(args ...string) (int, string) {
		cmd, _, stderr := nobodyCmd(t, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
			UseCgroupFD: true, CgroupFD: fd, // born inside the delegated subtree
		}
		return wait(t, cmd), stderr.String()
	}
	dir := publicDir(t, true)
	receipt := filepath.Join(dir, "r.json")
	code, stderr := run("run", "--require", "cgroup", "--receipt", receipt, "--", "sh", "-c", "setsid sleep 1000 & exit 0")
	if code != 0 {
		t.Fatalf("tether run as uid %d in a delegated subtree = %d, stderr %q", uid, code, stderr)
	}
	r, _ := readReceipt(t, receipt)
	if r.Mechanism != "cgroup" || r.Cgroup == nil || r.Cgroup.Parent != deleg || !r.StopConfirmed || r.StragglersTotal != 1 {
		t.Errorf("mechanism %q cgroup %+v confirmed %t stragglers %d; want cgroup under %s, confirmed, 1", r.Mechanism, r.Cgroup, r.StopConfirmed, r.StragglersTotal, deleg)
	}
	assertNoSurvivors(t)

	m, _ := cgroup.Mount()
	code, stderr = run("run", "--cgroup-parent", m, "--", "true")
	if code != 125 || !strings.Contains(stderr, "not writable") {
		t.Errorf("as uid %d, --cgroup-parent %s = %d, stderr %q; want 125 not writable", uid, m, code, stderr)
	}
	// From outside the subtree the kernel refuses to start into it (the
	// common-ancestor rule): a clear 125, not "cannot execute".
	cmd, _, errb := nobodyCmd(t, "run", "--cgroup-parent", deleg, "--", "true")
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
	if code := wait(t, cmd); code != 125 || !strings.Contains(errb.String(), "common ancestor") {
		t.Errorf("as uid %d outside the subtree, --cgroup-parent %s = %d, stderr %q; want 125 naming the common ancestor", uid, deleg, code, errb)
	}
	if l := leaves(deleg); len(l) > 0 {
		t.Errorf("leaves left in the delegated subtree: %v", l)
	}
}

// limitAboveV2Parent is TestRunLimitAboveParent on a pure v2 host: a
// parent cgroup limited to 256M (memory.max) refuses a run asking for 1G.
func limitAboveV2Parent(t *testing.T) {
	base := cgroupParent(t)
	if b, _ := os.ReadFile(base + "/cgroup.controllers"); !strings.Contains(string(b), "memory") {
		t.Skipf("no v1 memory hierarchy, and %s is not offered the v2 memory controller", base)
	}
	// base holds no process (the test binary sits beside its leaves), so
	// memory may be enabled for the limited child.
	if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
		t.Fatalf("enable memory in %s: %v", base, err)
	}
	dir := testParent(t)
	if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte("268435456"), 0); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(t.TempDir(), "started")
	code, _, stderr := tether(t, "run", "--cgroup-parent", dir, "--memory", "1G", "--", "touch", started)
	if code != 125 || !strings.Contains(stderr, "--memory 1G is above the limit of 256M set on "+filepath.Join(dir, "memory.max")) {
		t.Errorf("tether run --memory 1G under a 256M parent = %d, stderr %q; want 125 with both numbers", code, stderr)
	}
	if exists(started) {
		t.Error("the command ran")
	}
}
