package budget

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tether-run/tether/limits"
)

// TestForJob: a budget maps onto a job's fields; what a job cannot hold
// is refused, or with best effort, listed with its reason.
func TestForJob(t *testing.T) {
	b, err := ForJob(limits.Spec{Memory: 64 << 20, CPUs: 0.5, Pids: 12}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if b.Memory != 64<<20 || b.Processes != 12 || b.CPURate != 2500 || b.IsZero() {
		t.Errorf("ForJob = memory %d processes %d rate %d", b.Memory, b.Processes, b.CPURate)
	}
	for _, tc := range []struct {
		cpus float64
		ncpu int
		want uint32
	}{
		{1, 4, 2500}, {0.01, 64, 2}, {0.01, 1000, 1}, {16, 4, 10000}, {1.5, 3, 5000}, {1, 0, 10000},
	} {
		if got := cpuRate(tc.cpus, tc.ncpu); got != tc.want {
			t.Errorf("cpuRate(%g, %d) = %d, want %d", tc.cpus, tc.ncpu, got, tc.want)
		}
	}
	for _, s := range []limits.Spec{{MemoryHigh: 1 << 20}, {Swap: 0, SwapSet: true}} {
		if _, err := ForJob(s, 2, false); !errors.Is(err, limits.ErrUnavailable) {
			t.Errorf("ForJob(%+v, strict) = %v, want limits.ErrUnavailable", s, err)
		}
	}
	b, err = ForJob(limits.Spec{Memory: 1 << 30, MemoryHigh: 1 << 29, Swap: 1 << 20, SwapSet: true}, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	r := b.Receipt()
	if r.Mode != "best-effort" || len(r.NotApplied) != 2 || r.NotApplied[0].Name != "memory_high" || r.NotApplied[0].Requested != "512M" ||
		r.NotApplied[1].Name != "swap" || !strings.Contains(r.NotApplied[1].Reason, "page file") {
		t.Errorf("best-effort receipt %+v", r)
	}
	if _, err := ForJob(limits.Spec{Pids: math.MaxUint32 + 1}, 2, false); !errors.Is(err, limits.ErrSyntax) {
		t.Errorf("ForJob(pids 2^32) = %v, want limits.ErrSyntax", err)
	}
	if _, err := ForJob(limits.Spec{Memory: -1}, 2, true); !errors.Is(err, limits.ErrSyntax) {
		t.Errorf("ForJob(memory -1) = %v, want limits.ErrSyntax", err)
	}
}

// TestJobConfirm: a value read back as written is applied, with what it
// counts; one read back otherwise is refused (strict) or not applied.
func TestJobConfirm(t *testing.T) {
	b, _ := ForJob(limits.Spec{Memory: 64 << 20, Pids: 4}, 2, false)
	if err := b.confirm("memory", "F.JobMemoryLimit", 64<<20, 64<<20); err != nil {
		t.Fatal(err)
	}
	err := b.confirm("pids", "F.ActiveProcessLimit", 4, 0)
	if !errors.Is(err, limits.ErrUnavailable) || !strings.Contains(err.Error(), "F.ActiveProcessLimit was set to 4 and reads back as 0") {
		t.Errorf("confirm(mismatch, strict) = %v", err)
	}
	r := b.Receipt()
	if len(r.Applied) != 1 || r.Applied[0].Backend != "job" || r.Applied[0].Written != "67108864" || r.Applied[0].ReadBack != "67108864" ||
		r.Applied[0].Requested != "64M" || !strings.Contains(r.Applied[0].Note, "committed memory") {
		t.Errorf("applied %+v", r.Applied)
	}

	b, _ = ForJob(limits.Spec{Pids: 4}, 2, true)
	if err := b.confirm("pids", "F.ActiveProcessLimit", 4, 0); err != nil {
		t.Fatalf("confirm(mismatch, best effort) = %v", err)
	}
	if r := b.Receipt(); len(r.Applied) != 0 || len(r.NotApplied) != 1 || r.NotApplied[0].Requested != "4" || !strings.Contains(r.NotApplied[0].Reason, "reads back as 0") {
		t.Errorf("best-effort receipt %+v", r)
	}
}
