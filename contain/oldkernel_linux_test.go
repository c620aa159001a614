package contain

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/oldkernel"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/receipt"
)

// TestOldKernelPaths runs the cgroup scenarios with the paths of older
// kernels forced: membership and placement by /proc/PID/cgroup (no
// PIDFD_GET_INFO, before 6.13) and freeze+sigkill (no cgroup.kill, before
// 5.14). The receipt says which mechanism was in force.
func TestOldKernelPaths(t *testing.T) {
	if len(mechanisms(t)) < 2 {
		t.Skip("needs a writable cgroup v2 parent")
	}
	for _, force := range []struct {
		name                      string
		noPidfdInfo, noCgroupKill bool
	}{
		{"no-pidfd-info", true, false},
		{"no-cgroup-kill", false, true},
		{"both", true, true},
	} {
		t.Run(force.name, func(t *testing.T) {
			defer oldkernel.Force(force.noPidfdInfo, force.noCgroupKill)()
			for _, sc := range scenarios {
				if sc.needs != "" {
					continue
				}
				t.Run(sc.name, func(t *testing.T) {
					r := runScenario(t, receipt.MechanismCgroup, sc, false)
					caveats := strings.Join(r.Caveats, "\n")
					if force.noPidfdInfo {
						if r.Cgroup.Verified != "proc-cgroup" {
							t.Errorf("placement_verified_by = %q, want proc-cgroup", r.Cgroup.Verified)
						}
						if r.Evidence.MembersSeen > 0 && !strings.Contains(caveats, stop.CaveatProcMembership) {
							t.Errorf("caveats = %q, want the /proc membership caveat", r.Caveats)
						}
					}
					if r.Evidence.MembersSeen < sc.minMembers {
						t.Errorf("members seen = %d, want >= %d", r.Evidence.MembersSeen, sc.minMembers)
					}
					if sc.minMembers > 0 && r.Evidence.Signalled == 0 {
						t.Errorf("no member was sent SIGTERM: %+v", r.Evidence)
					}
					if force.noCgroupKill && r.Evidence.KillUsed {
						if k := stepNamed(r, "kill"); k == nil || !strings.HasPrefix(k.Observed, stop.KilledByFreeze) {
							t.Errorf("kill step = %+v, want %s", k, stop.KilledByFreeze)
						}
						if !strings.Contains(caveats, stop.CaveatFreezeKill) {
							t.Errorf("caveats = %q, want the freeze+sigkill caveat", r.Caveats)
						}
					}
					if sc.needKill && !r.Evidence.KillUsed {
						t.Errorf("kill not used, want it: %+v", r.Evidence)
					}
				})
			}
		})
	}
}

// TestOldKernelReapsZombieMembers: without PIDFD_GET_INFO (before 6.13) a
// member that died of the SIGTERM is still reaped by tether as an orphan:
// the zombie is told by its full identity, which the orphan sweep reads
// (it used to see only the pid, and left such zombies to init; seen on
// 6.12 and 6.1 in the VM matrix).
func TestOldKernelReapsZombieMembers(t *testing.T) {
	if !slices.Contains(mechanisms(t), receipt.MechanismCgroup) {
		t.Skip("no writable cgroup v2 parent")
	}
	defer oldkernel.Force(true, false)()
	for i := 0; i < 5; i++ {
		c := Command("sh", "-c", "setsid sleep 1000 & exit 0")
		c.Mechanism = receipt.MechanismCgroup
		c.Grace = 5 * time.Second
		if err := c.Run(); err != nil {
			t.Fatalf("Run() error = %v", err)
		}
		r := c.Receipt()
		if !r.StopConfirmed || r.Evidence.Reaped != 1 || r.Evidence.KillUsed {
			t.Fatalf("run %d: confirmed %t, reaped %d, kill used %t; want the daemon reaped by tether after SIGTERM\nsteps: %+v", i, r.StopConfirmed, r.Evidence.Reaped, r.Evidence.KillUsed, r.Stop.Steps)
		}
	}
}
