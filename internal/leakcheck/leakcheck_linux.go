package leakcheck

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Main runs the tests of m and returns the exit code, non-zero when the
// tests failed or leaked.
//
// Where it may, Main moves the test process into a cgroup of its own
// (<own cgroup>/tether-test-<mark>) for the run, so that the leaves its
// tests create by default land there and a leak is told apart from the
// leaves of test binaries running beside it. Elsewhere it compares
// snapshots of the tether leaves.
func Main(m *testing.M) int {
	mark := os.Getenv(Env)
	if mark == "" {
		var b [8]byte
		rand.Read(b[:])
		mark = hex.EncodeToString(b[:])
		os.Setenv(Env, mark)
	}
	home, back := enter(mark)
	var before map[string]bool
	if home == "" {
		before = leaves("/")
	}
	code := m.Run()
	msg := Check(mark, home, before)
	if home != "" {
		os.WriteFile(filepath.Join(back, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0)
		if err := removeTree(home); err != nil {
			msg += fmt.Sprintf("; cannot remove test cgroup %s: %v", home, err)
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

// enter moves the process into a fresh cgroup below its own and returns
// that cgroup's directory and the one to return to, or "" where it cannot.
func enter(mark string) (home, back string) {
	m := mount()
	if m == "" {
		return "", ""
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			back = filepath.Join(m, p)
		}
	}
	if back == "" {
		return "", ""
	}
	home = filepath.Join(back, "tether-test-"+mark)
	if os.Mkdir(home, 0o755) != nil {
		return "", ""
	}
	if os.WriteFile(filepath.Join(home, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0) != nil {
		os.Remove(home)
		return "", ""
	}
	return home, back
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
// carries mark, other than the caller, and tether leaves: those under home
// when home is set, else those not in before. It returns "" when nothing
// leaked. Processes get a moment to finish exiting before they count.
func Check(mark, home string, before map[string]bool) string {
	var procs map[int]string
	for range 50 {
		procs = Find(Env, mark)
		if len(procs) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var extra []string
	root := home
	if root == "" {
		root = "/"
	}
	for l := range leaves(root) {
		if !before[l] && l != home {
			extra = append(extra, l)
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

func mount() string {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(mi), "\n") {
		f := strings.Fields(line)
		for i, x := range f {
			if x == "-" && i+1 < len(f) && f[i+1] == "cgroup2" {
				return f[4]
			}
		}
	}
	return ""
}

// leaves returns the tether leaves in the cgroup v2 hierarchy below root
// (a directory of it, or "/" for all of it).
func leaves(root string) map[string]bool {
	out := map[string]bool{}
	if root == "/" {
		if root = mount(); root == "" {
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
