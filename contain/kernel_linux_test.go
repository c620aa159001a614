package contain

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
)

func TestKernelAtLeast(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    bool
	}{
		{"6.12.117+deb13-amd64", true},
		{"5.7.0", true},
		{"5.6.19-300.fc32.x86_64", false},
		{"5.10.0-32-amd64", true},
		{"4.19.0-27-amd64", false},
		{"garbage", true},
	} {
		if got := kernelAtLeast(tc.release, 5, 7); got != tc.want {
			t.Errorf("kernelAtLeast(%q, 5, 7) = %t, want %t", tc.release, got, tc.want)
		}
	}
}

// TestNoCloneIntoCgroup: on a kernel without CLONE_INTO_CGROUP (before
// 5.7; simulated here) auto mode runs the fallback and says why, while a
// required cgroup or a given parent fails closed with nothing started.
func TestNoCloneIntoCgroup(t *testing.T) {
	orig := cloneIntoCgroup
	cloneIntoCgroup = func() bool { return false }
	t.Cleanup(func() { cloneIntoCgroup = orig })

	c := Command("sh", "-c", "(sleep 1000 &); exit 0")
	c.Grace = 100 * time.Millisecond
	c.AdoptOrphans = true
	if err := c.Run(); err != nil {
		t.Fatalf("auto Run() error = %v", err)
	}
	r := c.Receipt()
	if r.Mechanism != receipt.MechanismFallback || !strings.Contains(r.FallbackReason, "5.7") || !r.StopConfirmed || r.StragglersTotal != 1 {
		t.Errorf("auto: mechanism %q, warning %q, confirmed %t, stragglers %d; want fallback naming Linux 5.7, the daemon stopped", r.Mechanism, r.FallbackReason, r.StopConfirmed, r.StragglersTotal)
	}

	c = Command("true")
	c.Mechanism = receipt.MechanismCgroup
	if err := c.Start(); !errors.Is(err, ErrNoCgroup) || !errors.Is(err, ErrNoCloneIntoCgroup) {
		t.Errorf("--mechanism cgroup: Start() error = %v, want ErrNoCgroup wrapping ErrNoCloneIntoCgroup", err)
	}
	if c.Pid() != 0 || c.Receipt().Cgroup != nil {
		t.Errorf("--mechanism cgroup: something was started or created: pid %d, cgroup %+v", c.Pid(), c.Receipt().Cgroup)
	}
}
