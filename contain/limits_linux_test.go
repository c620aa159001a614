package contain

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// needController skips unless this host can enforce ctrl (in v2 beside a
// writable leaf parent, or in a writable v1 hierarchy), naming why.
func needController(t *testing.T, ctrl string) {
	t.Helper()
	if p, err := cgroup.V1Parent(ctrl); err == nil {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	if h, err := delegate.Parent(context.Background()); err == nil {
		if b, err := os.ReadFile(h.Dir + "/cgroup.controllers"); err == nil && strings.Contains(string(b), ctrl) {
			return // offered to the leaves' parent: tether enables it
		}
	}
	t.Skipf("no %s controller this host lets tether use (v2 subtree_control or a v1 hierarchy)", ctrl)
}

func limitedRun(t *testing.T, spec limits.Spec, argv ...string) (*Cmd, *receipt.Receipt) {
	t.Helper()
	c := Command(argv[0], argv[1:]...)
	c.Limits = spec
	c.Grace = 200 * time.Millisecond
	c.Timeout = 60 * time.Second
	if err := c.Start(); err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	c.Wait()
	r := c.Receipt()
	if !r.StopConfirmed {
		t.Errorf("stop_confirmed = false: %+v", r.Evidence)
	}
	if r.Limits == nil {
		t.Fatal("receipt has no limits")
	}
	for _, s := range r.Stop.Steps {
		if s.Name == "limits" && s.Error != "" {
			t.Errorf("limits step error: %s", s.Error)
		}
	}
	return c, r
}

func TestMemoryLimitOOMKills(t *testing.T) {
	needController(t, "memory")
	// 400 MB of touched memory against a 64M budget.
	_, r := limitedRun(t, limits.Spec{Memory: 64 << 20}, "python3", "-c", "x = b'a' * (400 << 20); print('survived')")
	if !r.Exit.OOMKilled || r.Exit.Signal != "SIGKILL" {
		t.Errorf("exit = %+v, want OOM-killed by SIGKILL", r.Exit)
	}
	o := r.Limits.Outcome
	if o == nil || o.OOMKills < 1 || o.MemoryPeakBytes > 80<<20 {
		t.Errorf("outcome = %+v, want ≥1 OOM kill and a peak near 64M", o)
	}
	if a := r.Limits.Applied; a[0].Backend == "v1" && r.Limits.V1PlacementVerifiedBy == "" {
		t.Errorf("v1 limits without v1_placement_verified_by")
	}
	if a := r.Limits.Applied; len(a) != 1 || a[0].Name != "memory" || a[0].ReadBack != "67108864" {
		t.Errorf("applied = %+v, want memory read back as 67108864", a)
	}
}

func TestPidsLimitStopsForkLoop(t *testing.T) {
	needController(t, "pids")
	// Try to hold 100 sleeps at once under a budget of 20.
	_, r := limitedRun(t, limits.Spec{Pids: 20}, "sh", "-c", `n=0; while [ $n -lt 100 ]; do sleep 30 & n=$((n+1)); done 2>/dev/null; echo started`)
	if o := r.Limits.Outcome; o == nil || o.PidsLimitHits < 1 {
		t.Errorf("outcome = %+v, want pids limit hits", o)
	}
	if r.Evidence.MembersSeen > 20 {
		t.Errorf("members seen = %d, want at most the budget of 20", r.Evidence.MembersSeen)
	}
}

// TestCPULimitHalvesACore measures the group's CPU time over a window, as
// the cgroup counts it, not wall-clock timing of the test: a busy loop
// under --cpus 0.5 gets about half of the elapsed time.
func TestCPULimitHalvesACore(t *testing.T) {
	needController(t, "cpu")
	c := Command("sh", "-c", "while :; do :; done")
	c.Limits = limits.Spec{CPUs: 0.5}
	c.Grace = -1
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Kill(); c.Wait() }()
	dir := c.sys.budget.V1Dirs()["cpu"]
	usage := func() (time.Duration, time.Time) {
		if dir == "" { // v2: cpu.stat of the leaf
			st, _ := c.leaf.CPU()
			return time.Duration(st.UsageUsec) * time.Microsecond, time.Now()
		}
		b, _ := os.ReadFile(dir + "/cpuacct.usage") // absent: cpuacct is a separate hierarchy here
		if len(b) == 0 {
			st, _ := c.leaf.CPU()
			return time.Duration(st.UsageUsec) * time.Microsecond, time.Now()
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return time.Duration(n), time.Now()
	}
	time.Sleep(300 * time.Millisecond) // let it settle into throttling
	u0, t0 := usage()
	time.Sleep(2 * time.Second)
	u1, t1 := usage()
	share := float64(u1-u0) / float64(t1.Sub(t0))
	t.Logf("CPU share under --cpus 0.5: %.2f", share)
	// The limit is a cap: the share must not exceed it (with slack for
	// one period at the window's edges). A lower bound would measure the
	// machine's load, not tether: on a busy 2-core host the loop got 0.22.
	// That the cap bit is shown by the throttled periods below.
	if share > 0.7 {
		t.Errorf("CPU share = %.2f of one core, want at most 0.5 (≤ 0.7 with slack)", share)
	}
	c.Kill()
	c.Wait()
	if o := c.Receipt().Limits.Outcome; o == nil || o.CPUThrottled < 1 {
		t.Errorf("outcome = %+v, want throttled periods", o)
	}
}
