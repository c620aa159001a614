package leakcheck

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Main runs the tests of m and returns the exit code, non-zero when the
// tests failed or leaked.
//
// Where it may, Main moves the test process into cgroups of its own
// (<own cgroup>/tether-test-<mark>, in the v2 hierarchy and in the v1
// memory, pids and cpu hierarchies) for the run, so that the leaves its
// tests create land there and a leak is told apart from the leaves of test
// binaries running beside it. Elsewhere it compares snapshots of the v2
// tether leaves.
func Main(m *testing.M) int {
	mark := os.Getenv(Env)
	if mark == "" {
		var b [8]byte
		rand.Read(b[:])
		mark = hex.EncodeToString(b[:])
		os.Setenv(Env, mark)
	}
	// A watcher of tether's own death (internal/watch) normally waits a
	// few seconds for the next run before it exits; a test's must be gone
	// when its last owner is, or the check below finds it.
	if _, ok := os.LookupEnv("TETHER_WATCH_LINGER"); !ok {
		os.Setenv("TETHER_WATCH_LINGER", "0")
	}
	if fuzzWorker() {
		// A worker of `go test -fuzz` stays in the coordinator's cgroups
		// and leaves the check to it: the coordinator ends its workers
		// with a signal, so a worker's own cgroups would be left behind
		// as leaks, and what an input leaked is found in the coordinator's
		// home once the workers are gone.
		return m.Run()
	}
	homes := enter(mark)
	if s, ok := enterScope(mark); ok {
		homes = append([]home{s}, homes...)
	}
	var before map[string]bool
	if len(homes) == 0 || homes[0].v1 {
		before = leaves("/")
	}
	code := m.Run()
	var roots []string
	for _, h := range homes {
		roots = append(roots, h.dir)
	}
	msg := Check(mark, roots, before)
	for _, h := range homes {
		if h.scope {
			continue // systemd removes the scope when this process exits
		}
		os.WriteFile(filepath.Join(h.back, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
		if err := removeTree(h.dir); err != nil {
			msg += fmt.Sprintf("; cannot remove test cgroup %s: %v", h.dir, err)
		}
	}
	if msg != "" {
		fmt.Fprintf(os.Stderr, "leakcheck: FAIL: %s\n", msg)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// fuzzWorker reports whether this test binary is a worker process of
// `go test -fuzz`, which the testing package starts with -test.fuzzworker.
func fuzzWorker() bool {
	return slices.ContainsFunc(os.Args[1:], func(a string) bool {
		return a == "-test.fuzzworker" || strings.HasPrefix(a, "-test.fuzzworker=")
	})
}

// home is a cgroup the test process moved into, and where it came from.
type home struct {
	dir, back string
	v1        bool
	scope     bool // a systemd scope; the process sits in dir/supervisor
}

// enter moves the process into a fresh cgroup below its own in the v2
// hierarchy (first in the result, if it could) and in each v1 hierarchy of
// the controllers tether uses for limits.
func enter(mark string) []home {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	mounts := mounts()
	var homes []home
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var root string
		switch f[1] {
		case "":
			if booted() {
				continue // enterScope: systemd's tree is written only where it delegated
			}
			root = mounts["cgroup2"]
		case "memory", "pids", "cpu", "cpu,cpuacct":
			root = mounts[f[1]]
		}
		if root == "" {
			continue
		}
		h := home{back: filepath.Join(root, f[2]), v1: f[1] != ""}
		sweepStale(h.back)
		h.dir = filepath.Join(h.back, fmt.Sprintf("tether-test-%d-%s", os.Getpid(), mark))
		if os.Mkdir(h.dir, 0o755) != nil {
			continue
		}
		if os.WriteFile(filepath.Join(h.dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0) != nil {
			os.Remove(h.dir)
			continue
		}
		if h.v1 {
			homes = append(homes, h)
		} else {
			homes = append([]home{h}, homes...)
		}
	}
	return homes
}

// removeTree kills and removes a cgroup subtree, deepest first.
func removeTree(dir string) error {
	os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
	var dirs []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	var err error
	for i := len(dirs) - 1; i >= 0; i-- {
		for range 100 {
			if err = os.Remove(dirs[i]); err == nil || !errors.Is(err, syscall.EBUSY) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return err
}

// Check reports (and then cleans up) live processes whose environment
// carries mark, other than the caller, and tether leaves: those under the
// homes, and, when before is not nil, v2 leaves not in before. It returns
// "" when nothing leaked. Processes get a moment (3 s) to finish exiting
// before they count: a watcher (internal/watch) serves 100 ms more after
// its last owner leaves, and a race-built one's exit is slow on a loaded
// machine (CI's -race pass once took more than 1 s).
func Check(mark string, homes []string, before map[string]bool) string {
	var procs map[int]string
	for range 150 {
		procs = Find(Env, mark)
		if len(procs) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var extra []string
	for _, h := range homes {
		for l := range leaves(h) {
			if l != h {
				extra = append(extra, l)
			}
		}
	}
	if before != nil {
		for l := range leaves("/") {
			if !before[l] && !slices.Contains(homes, l) && !under(l, homes) {
				extra = append(extra, l)
			}
		}
	}
	if len(procs) == 0 && len(extra) == 0 {
		return ""
	}
	var desc []string
	for pid, argv := range procs {
		desc = append(desc, fmt.Sprintf("%d %q", pid, argv))
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, l := range extra {
		removeTree(l)
	}
	return fmt.Sprintf("%d processes leaked: %s; %d cgroup leaves leaked: %s",
		len(procs), strings.Join(desc, ", "), len(extra), strings.Join(extra, ", "))
}

// Find returns the live processes (not zombies, not the caller) whose
// environment holds name=value, with their command lines.
func Find(name, value string) map[int]string {
	needle := []byte("\x00" + name + "=" + value + "\x00")
	self := os.Getpid()
	names, _ := filepath.Glob("/proc/[0-9]*")
	out := map[int]string{}
	for _, n := range names {
		pid, _ := strconv.Atoi(filepath.Base(n))
		if pid == self {
			continue
		}
		env, err := os.ReadFile(n + "/environ")
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), needle) {
			continue
		}
		st, err := os.ReadFile(n + "/stat")
		if err != nil {
			continue // gone
		}
		if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && (st[i+2] == 'Z' || st[i+2] == 'X') {
			continue
		}
		out[pid] = cmdline(pid)
	}
	return out
}

// AwaitGone waits up to d for the processes Find(name, value) returns to
// be gone, and returns those still there. A test whose temp dir is a
// state dir waits so for that dir's watcher (internal/watch), which
// outlives its last owner by a moment and may still be creating or
// removing its socket there: the dir's removal fails meanwhile
// ("directory not empty").
func AwaitGone(name, value string, d time.Duration) map[int]string {
	deadline := time.Now().Add(d)
	for {
		left := Find(name, value)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// AwaitAtCleanup registers a cleanup on tb that waits (AwaitGone, 10 s)
// for the processes whose environment holds name=value to be gone, and
// fails tb if some are not. Registered right after a temp dir is made,
// it runs before the dir's removal (cleanups run last first): for a
// state dir, name=value is its watcher's (watch.Env=dir).
func AwaitAtCleanup(tb testing.TB, name, value string) {
	tb.Cleanup(func() {
		if left := AwaitGone(name, value, 10*time.Second); len(left) > 0 {
			tb.Errorf("still running after 10 s (%s=%s): %v", name, value, left)
		}
	})
}

// mounts maps "cgroup2" and each v1 controller list ("memory",
// "cpu,cpuacct") to its mount point.
func mounts() map[string]string {
	out := map[string]string{}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		for i, x := range f {
			if x != "-" || i+3 >= len(f) {
				continue
			}
			switch f[i+1] {
			case "cgroup2":
				out["cgroup2"] = f[4]
			case "cgroup":
				var ctrls []string
				for _, o := range strings.Split(f[i+3], ",") {
					switch o {
					case "memory", "pids", "cpu", "cpuacct":
						ctrls = append(ctrls, o)
					}
				}
				out[strings.Join(ctrls, ",")] = f[4]
			}
		}
	}
	return out
}

func under(p string, roots []string) bool {
	for _, r := range roots {
		if strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// leaves returns the tether leaves in the cgroup v2 hierarchy below root
// (a directory of it, or "/" for all of it).
func leaves(root string) map[string]bool {
	out := map[string]bool{}
	if root == "/" {
		if root = mounts()["cgroup2"]; root == "" {
			return out
		}
	}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), "tether-") {
			out[p] = true
		}
		return nil
	})
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
}

// sweepStale removes empty test homes (tether-test-PID-MARK) under dir
// whose test binary is gone: one killed before its cleanup (a go test
// timeout, a SIGKILL) cannot remove its own.
func sweepStale(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "tether-test-")
		if !ok || !e.IsDir() {
			continue
		}
		pidStr, mark, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidStr)
		if !ok || err != nil {
			continue
		}
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err == nil && bytes.Contains(env, []byte(Env+"="+mark)) {
			continue // its test binary is alive
		}
		home := filepath.Join(dir, e.Name())
		if b, _ := os.ReadFile(filepath.Join(home, "cgroup.procs")); len(bytes.TrimSpace(b)) > 0 {
			continue // not empty: leave it to be seen
		}
		removeTree(home)
	}
}

// booted reports whether the host was booted with systemd (sd_booted(3)).
func booted() bool {
	fi, err := os.Lstat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

// enterScope, on a host booted with systemd, asks the manager for a
// transient scope with Delegate=yes holding the test process, and moves the
// process into the scope's supervisor child, as tether's delegate package
// does (which leakcheck cannot import: cgroup's own tests use leakcheck).
// The tests' leaves then go in the scope, which holds no process and may
// enable controllers, and nothing is written where systemd did not
// delegate. It uses busctl, which ships with systemd.
func enterScope(mark string) (home, bool) {
	if !booted() {
		return home{}, false
	}
	pid := os.Getpid()
	unit := fmt.Sprintf("tether-test-%d-%s.scope", pid, mark)
	args := []string{"call", "--quiet", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
		"org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))", unit, "fail",
		"3", "PIDs", "au", "1", strconv.Itoa(pid), "Delegate", "b", "true", "CollectMode", "s", "inactive-or-failed", "0"}
	if os.Geteuid() != 0 {
		args = append([]string{"--user"}, args...)
	}
	if out, err := exec.Command("busctl", args...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "leakcheck: cannot get a systemd scope: busctl: %v: %s\n", err, out)
		return home{}, false
	}
	root := mounts()["cgroup2"]
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile("/proc/self/cgroup")
		for _, line := range strings.Split(string(b), "\n") {
			rel, ok := strings.CutPrefix(line, "0::")
			if !ok || filepath.Base(rel) != unit {
				continue
			}
			h := home{dir: filepath.Join(root, rel), scope: true}
			sup := filepath.Join(h.dir, "supervisor")
			if os.Mkdir(sup, 0o755) != nil || os.WriteFile(filepath.Join(sup, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0) != nil {
				fmt.Fprintf(os.Stderr, "leakcheck: cannot move into %s\n", sup)
				return home{}, false
			}
			return h, true
		}
	}
	fmt.Fprintf(os.Stderr, "leakcheck: systemd did not move the test process into %s\n", unit)
	return home{}, false
}
