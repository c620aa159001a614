package budget

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/limits"
)

// tree makes a fake cgroup directory with files. These tests cover the
// v2 paths this machine cannot enforce (its v2 hierarchy has no memory,
// cpu or pids controllers); enforcement itself is tested on v1 leaves in
// the contain package.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func v2Leaf(t *testing.T) string {
	return tree(t, map[string]string{"memory.max": "max", "memory.high": "max", "memory.swap.max": "max", "cpu.max": "max 100000", "pids.max": "max",
		"memory.peak": "0", "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n", "pids.events": "max 0\n", "cpu.stat": "usage_usec 0\nnr_throttled 0\nthrottled_usec 0\n"})
}

func read(t *testing.T, dir, file string) string {
	b, _ := os.ReadFile(filepath.Join(dir, file))
	return strings.TrimSpace(string(b))
}

func TestApplyV2(t *testing.T) {
	leaf := v2Leaf(t)
	parent := tree(t, map[string]string{"memory.max": "8589934592", "cpu.max": "max 100000", "pids.max": "max", "cgroup.controllers": "cpu memory pids"})
	spec := limits.Spec{Memory: 64 << 20, MemoryHigh: 32 << 20, SwapSet: true, CPUs: 0.5, Pids: 100}
	b, err := ApplyTo(spec, Host{V2: PathDir(leaf), V2Parents: []string{parent}, SwapTotal: 1 << 30}, false)
	if err != nil {
		t.Fatalf("ApplyTo() error = %v", err)
	}
	want := map[string]string{"memory.max": "67108864", "memory.high": "33554432", "memory.swap.max": "0", "cpu.max": "50000 100000", "pids.max": "100"}
	for f, v := range want {
		if got := read(t, leaf, f); got != v {
			t.Errorf("%s = %q, want %q", f, got, v)
		}
	}
	r := b.Receipt()
	if len(r.Applied) != 5 || len(r.NotApplied) != 0 || r.Mode != "strict" {
		t.Fatalf("receipt = %+v", r)
	}
	for _, a := range r.Applied {
		if a.Backend != "v2" || a.ReadBack != a.Written || !strings.HasPrefix(a.File, leaf) {
			t.Errorf("applied %+v: want v2, read back = written, file in the leaf", a)
		}
	}
	os.WriteFile(filepath.Join(leaf, "memory.events"), []byte("max 3\noom_kill 1\n"), 0o644)
	os.WriteFile(filepath.Join(leaf, "memory.peak"), []byte("67100000\n"), 0o644)
	os.WriteFile(filepath.Join(leaf, "cpu.stat"), []byte("nr_throttled 7\nthrottled_usec 900\n"), 0o644)
	os.WriteFile(filepath.Join(leaf, "pids.events"), []byte("max 2\n"), 0o644)
	o := b.Outcome()
	if o.OOMKills != 1 || o.MemoryLimitHits != 3 || o.MemoryPeakBytes != 67100000 || o.CPUThrottled != 7 || o.CPUThrottledUsec != 900 || o.PidsLimitHits != 2 {
		t.Errorf("Outcome() = %+v", o)
	}
}

func TestApplyRefusesAboveParent(t *testing.T) {
	tests := []struct {
		name   string
		spec   limits.Spec
		parent map[string]string
		want   []string
	}{
		{"memory", limits.Spec{Memory: 2 << 30}, map[string]string{"memory.max": "1073741824"}, []string{"--memory 2G", "1G"}},
		{"memory-high", limits.Spec{MemoryHigh: 2 << 30}, map[string]string{"memory.max": "1073741824"}, []string{"--memory-high 2G", "1G"}},
		{"cpus", limits.Spec{CPUs: 2}, map[string]string{"cpu.max": "100000 100000"}, []string{"--cpus 2", "1 CPUs"}},
		{"cpus other period", limits.Spec{CPUs: 1}, map[string]string{"cpu.max": "25000 50000"}, []string{"--cpus 1", "0.5 CPUs"}},
		{"pids", limits.Spec{Pids: 600}, map[string]string{"pids.max": "512"}, []string{"--pids 600", "512"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaf := v2Leaf(t)
			near := tree(t, nil)
			far := tree(t, tt.parent)
			_, err := ApplyTo(tt.spec, Host{V2: PathDir(leaf), V2Parents: []string{near, far}}, true)
			if !errors.Is(err, limits.ErrAboveParent) {
				t.Fatalf("ApplyTo() error = %v, want limits.ErrAboveParent", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if got := read(t, leaf, "memory.max"); got != "max" {
				t.Errorf("memory.max = %q after a refusal, want untouched", got)
			}
		})
	}
}

func TestApplyUnavailable(t *testing.T) {
	leaf := tree(t, nil) // no controller files: not enabled
	parent := tree(t, map[string]string{"cgroup.controllers": "hugetlb", "cgroup.subtree_control": ""})
	host := Host{V2: PathDir(leaf), V2Parents: []string{parent}}
	spec := limits.Spec{Memory: 64 << 20, Pids: 10}
	if _, err := ApplyTo(spec, host, false); !errors.Is(err, limits.ErrUnavailable) || !strings.Contains(err.Error(), "memory controller") {
		t.Fatalf("strict ApplyTo() error = %v, want limits.ErrUnavailable naming the memory controller", err)
	}
	b, err := ApplyTo(spec, host, true)
	if err != nil {
		t.Fatalf("best-effort ApplyTo() error = %v", err)
	}
	r := b.Receipt()
	if len(r.NotApplied) != 2 || len(r.Applied) != 0 || r.Mode != "best-effort" {
		t.Errorf("best-effort receipt = %+v, want 2 not applied", r)
	}
}

// TestApplyEnablesOfferedController: a parent that offers a controller in
// cgroup.controllers gets it enabled in cgroup.subtree_control.
func TestApplyEnablesOfferedController(t *testing.T) {
	leaf := tree(t, nil)
	parent := tree(t, map[string]string{"cgroup.controllers": "memory pids", "cgroup.subtree_control": "", "cgroup.type": "domain", "cgroup.procs": ""})
	b, _ := ApplyTo(limits.Spec{Pids: 10}, Host{V2: PathDir(leaf), V2Parents: []string{parent, tree(t, nil)}}, true)
	if got := read(t, parent, "cgroup.subtree_control"); got != "+pids" {
		t.Errorf("cgroup.subtree_control = %q, want +pids written", got)
	}
	// The leaf is gone: Restore leaves the parent as it was found.
	if err := b.Restore(); err != nil {
		t.Fatalf("Restore() error = %v", err)
	}
	if got := read(t, parent, "cgroup.subtree_control"); got != "-pids" {
		t.Errorf("cgroup.subtree_control after Restore = %q, want -pids written", got)
	}
}

// TestRestoreKeepsControllersInUse: while the parent still has a child
// cgroup (another run's leaf), Restore disables nothing.
func TestRestoreKeepsControllersInUse(t *testing.T) {
	leaf := tree(t, nil)
	parent := tree(t, map[string]string{"cgroup.controllers": "memory pids", "cgroup.subtree_control": "", "cgroup.type": "domain", "cgroup.procs": ""})
	os.Mkdir(filepath.Join(parent, "tether-other"), 0o755)
	b, _ := ApplyTo(limits.Spec{Pids: 10}, Host{V2: PathDir(leaf), V2Parents: []string{parent, tree(t, nil)}}, true)
	if err := b.Restore(); err != nil {
		t.Fatalf("Restore() error = %v", err)
	}
	if got := read(t, parent, "cgroup.subtree_control"); got != "+pids" {
		t.Errorf("cgroup.subtree_control = %q, want +pids left for the other child", got)
	}
}

// TestApplyNeverEnablesInPopulatedParent: a parent with processes of its
// own, or one that is not a plain domain, is never written: pids or cpu
// would turn it "domain threaded" and break every later start there
// (seen on systemd hosts: EOPNOTSUPP from clone3 for good).
func TestApplyNeverEnablesInPopulatedParent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"processes", map[string]string{"cgroup.type": "domain", "cgroup.procs": "123\n456\n"}, "holds 2 processes"},
		{"threaded", map[string]string{"cgroup.type": "domain threaded", "cgroup.procs": ""}, `type "domain threaded"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"cgroup.controllers": "cpu memory pids", "cgroup.subtree_control": "unchanged"}
			for k, v := range tc.files {
				files[k] = v
			}
			parent := tree(t, files)
			_, err := ApplyTo(limits.Spec{Pids: 10, CPUs: 1, Memory: 1 << 30}, Host{V2: PathDir(tree(t, nil)), V2Parents: []string{parent, tree(t, nil)}}, false)
			if !errors.Is(err, limits.ErrUnavailable) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ApplyTo() error = %v, want limits.ErrUnavailable saying %q", err, tc.want)
			}
			if got := read(t, parent, "cgroup.subtree_control"); got != "unchanged" {
				t.Errorf("cgroup.subtree_control = %q, want it untouched", got)
			}
		})
	}
}

func TestApplyV1(t *testing.T) {
	dirs := map[string]string{
		"memory": tree(t, map[string]string{"memory.limit_in_bytes": "9223372036854771712", "memory.max_usage_in_bytes": "0", "memory.failcnt": "0", "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"}),
		"cpu":    tree(t, map[string]string{"cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000", "cpu.stat": "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"}),
		"pids":   tree(t, map[string]string{"pids.max": "max", "pids.events": "max 0\n"}),
	}
	parent := tree(t, map[string]string{"memory.limit_in_bytes": "9223372036854771712", "cpu.cfs_quota_us": "-1", "cpu.cfs_period_us": "100000", "pids.max": "max"})
	host := Host{SwapTotal: -1, NewV1: func(c string) (Dir, []string, error) { return PathDir(dirs[c]), []string{parent}, nil }}
	spec := limits.Spec{Memory: 64 << 20, MemoryHigh: 32 << 20, SwapSet: true, CPUs: 0.5, Pids: 50}
	if _, err := ApplyTo(spec, host, false); !errors.Is(err, limits.ErrUnavailable) || !strings.Contains(err.Error(), "memory.high") {
		t.Fatalf("strict ApplyTo(memory-high on v1) error = %v, want limits.ErrUnavailable about memory.high", err)
	}
	b, err := ApplyTo(spec, host, true)
	if err != nil {
		t.Fatalf("ApplyTo() error = %v", err)
	}
	if got := read(t, dirs["memory"], "memory.limit_in_bytes"); got != "67108864" {
		t.Errorf("memory.limit_in_bytes = %q", got)
	}
	if q, p := read(t, dirs["cpu"], "cpu.cfs_quota_us"), read(t, dirs["cpu"], "cpu.cfs_period_us"); q != "50000" || p != "100000" {
		t.Errorf("cfs quota/period = %s/%s, want 50000/100000", q, p)
	}
	if got := read(t, dirs["pids"], "pids.max"); got != "50" {
		t.Errorf("pids.max = %q", got)
	}
	r := b.Receipt()
	var notApplied []string
	for _, n := range r.NotApplied {
		notApplied = append(notApplied, n.Name)
	}
	if strings.Join(notApplied, ",") != "memory_high,swap" {
		t.Errorf("not applied = %v, want memory_high and swap (no memsw, host has swap -1)", notApplied)
	}
	if len(b.V1()) != 3 {
		t.Errorf("V1() has %d leaves, want 3", len(b.V1()))
	}
	// With no swap on the host, --swap 0 holds without a controller.
	b, err = ApplyTo(limits.Spec{SwapSet: true}, Host{SwapTotal: 0}, false)
	if err != nil || b.Receipt().Applied[0].Backend != "host" {
		t.Errorf("--swap 0 without swap: %v, %+v", err, b.Receipt())
	}
	os.WriteFile(filepath.Join(dirs["memory"], "memory.oom_control"), []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 0o644)
	os.WriteFile(filepath.Join(dirs["cpu"], "cpu.stat"), []byte("nr_periods 9\nnr_throttled 4\nthrottled_time 5000000\n"), 0o644)
	b, _ = ApplyTo(spec, host, true)
	if o := b.Outcome(); o.OOMKills != 2 || o.CPUThrottled != 4 || o.CPUThrottledUsec != 5000 {
		t.Errorf("v1 Outcome() = %+v", o)
	}
}
