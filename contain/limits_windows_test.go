package contain

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/testuser"
	"github.com/tether-run/tether/limits"
)

// TestLimitsUnderWine: Wine 8 accepts a job's memory and process limits
// and keeps neither (its query reads back zeros), and refuses a CPU
// rate, so a strict budget is refused before anything runs, and a
// best-effort one says for each limit why it is not applied. On Windows
// TestLimitsEnforced runs instead.
func TestLimitsUnderWine(t *testing.T) {
	if wineVersion() == "" {
		t.Skip("on Windows, not Wine: TestLimitsEnforced covers limits")
	}
	tag, dir := newTag(), testuser.TempDir(t)
	c := helperCmd(t, "exit", tag, dir, "0")
	c.Limits = limits.Spec{Memory: 64 << 20, Pids: 10}
	err := c.Start()
	if !errors.Is(err, limits.ErrUnavailable) || !strings.Contains(err.Error(), "reads back as 0") {
		t.Fatalf("Start(strict limits) = %v, want ErrUnavailable saying what read back", err)
	}
	r := c.Receipt()
	if !r.StopConfirmed || r.Stop.Reason != string(ReasonStartFailed) || r.Exit.Code != 125 || r.Job == nil || !r.Job.Closed {
		t.Errorf("receipt of a refused start: confirmed %v reason %q exit %d job %+v", r.StopConfirmed, r.Stop.Reason, r.Exit.Code, r.Job)
	}

	c = helperCmd(t, "exit", tag, dir, "0")
	c.Limits = limits.Spec{Memory: 64 << 20, MemoryHigh: 32 << 20, SwapSet: true, CPUs: 0.5, Pids: 10}
	c.BestEffortLimits = true
	if err := c.Run(); err != nil {
		t.Fatalf("Run(best-effort limits) = %v", err)
	}
	l := c.Receipt().Limits
	if l == nil || l.Mode != "best-effort" || len(l.Applied) != 0 {
		t.Fatalf("limits %+v, want best-effort with nothing applied", l)
	}
	want := map[string]string{
		"memory":      "JobMemoryLimit was set to 67108864 and reads back as 0",
		"memory_high": "no soft memory limit",
		"swap":        "no separate swap limit",
		"cpus":        "SetInformationJobObject(CpuRateControl)", // Wine 8 refuses it
		"pids":        "ActiveProcessLimit was set to 10 and reads back as 0",
	}
	for _, u := range l.NotApplied {
		if w, ok := want[u.Name]; !ok || !strings.Contains(u.Reason, w) {
			t.Errorf("%s not applied: %q, want a reason with %q", u.Name, u.Reason, w)
		}
		delete(want, u.Name)
	}
	for name := range want {
		t.Errorf("%s missing from not_applied %+v", name, l.NotApplied)
	}
	checkGone(t, tag, nil)
}

// TestLimitsEnforced: on Windows the job holds each limit — read back
// as written — and enforces it: an allocation beyond the memory limit
// fails, a process beyond the process limit is not created, and the
// receipt counts the hits the completion port reported.
func TestLimitsEnforced(t *testing.T) {
	if v := wineVersion(); v != "" {
		t.Skipf("under Wine %s, which accepts job limits but neither enforces nor reports them (TestLimitsUnderWine covers that)", v)
	}
	tag, dir := newTag(), testuser.TempDir(t)
	c := helperCmd(t, "limited", tag, dir)
	c.Limits = limits.Spec{Memory: 256 << 20, CPUs: 0.5, Pids: 3}
	var out strings.Builder
	c.Stdout = &out
	if err := c.Run(); err != nil {
		t.Fatalf("Run = %v; output %q", err, out.String())
	}
	r := c.Receipt()
	checkReceipt(t, r, 1)
	l := r.Limits
	if l == nil || len(l.Applied) != 3 || len(l.NotApplied) != 0 {
		t.Fatalf("limits %+v, want memory, cpus and pids applied", l)
	}
	for _, a := range l.Applied {
		if a.Backend != "job" || a.ReadBack != a.Written || a.Written == "" {
			t.Errorf("%s: %+v, want read back as written", a.Name, a)
		}
	}
	got := strings.Fields(out.String())
	if !slices.Contains(got, "alloc:refused") || !slices.Contains(got, "spawn:refused") {
		t.Errorf("the helper said %q, want an allocation and a spawn refused", got)
	}
	if o := l.Outcome; o == nil || o.MemoryLimitHits < 1 || o.PidsLimitHits < 1 || o.MemoryPeakBytes <= 0 {
		t.Errorf("outcome %+v, want memory and process limit hits and a peak", l.Outcome)
	}
	checkGone(t, tag, nil)
}
