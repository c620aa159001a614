package stop

import (
	"fmt"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/oldkernel"
)

// Observations of the kill step: which mechanism killed the group.
const (
	KilledByCgroupKill = "wrote 1 to cgroup.kill"
	KilledByFreeze     = "freeze+sigkill"
)

// kill kills every member and waits up to wait for populated 0.
func (r *Run) kill(wait time.Duration) bool {
	if oldkernel.NoCgroupKill() || !r.Leaf.HasKill() {
		return r.freezeKill(wait)
	}
	began := time.Now()
	err := r.Leaf.Kill()
	r.StepFrom(began, "kill", KilledByCgroupKill, 0, err)
	empty, err := r.Leaf.WaitEmpty(wait)
	obs := "populated 0"
	if !empty {
		obs = fmt.Sprintf("still populated after %s", wait)
	}
	r.step("kill-wait", obs, 0, err)
	return empty
}

// freezeFor bounds one wait for `frozen 1`: a task in an uninterruptible
// sleep delays freezing; it is SIGKILLed anyway and the next round gets it.
const freezeFor = 100 * time.Millisecond

// freezeKill kills the group on kernels without cgroup.kill (5.7–5.13):
// freeze the leaf so nothing in it can fork, SIGKILL every member through
// a verified pidfd, thaw so the kills take effect, and repeat until the
// leaf is empty or the kill wait ends. A frozen task dies of SIGKILL once
// thawed; a child forked just before the freeze is in cgroup.procs by the
// time the freeze holds.
func (r *Run) freezeKill(wait time.Duration) bool {
	began := time.Now()
	deadline := began.Add(wait)
	killed, rounds := 0, 0
	var ferr error
	r.Caveats = append(r.Caveats, CaveatFreezeKill)
	end := func(empty bool, obs string) bool {
		// Never leave the leaf frozen: its members could not exit.
		if err := r.Leaf.Freeze(false); err != nil && ferr == nil {
			ferr = err
		}
		r.StepFrom(began, "kill", fmt.Sprintf("%s: %d SIGKILLs in %d rounds", KilledByFreeze, killed, rounds), 0, ferr)
		r.step("kill-wait", obs, 0, nil)
		return empty
	}
	for {
		if empty, _ := r.Leaf.WaitEmpty(0); empty {
			return end(true, "populated 0")
		}
		if time.Now().After(deadline) {
			return end(false, fmt.Sprintf("still populated after %s", wait))
		}
		rounds++
		if err := r.Leaf.Freeze(true); err != nil {
			ferr = err // without a freezer, signal anyway: the next round catches forks
		} else {
			r.Leaf.WaitFrozen(min(freezeFor, time.Until(deadline)))
		}
		pids, _ := r.Leaf.Procs()
		for _, pid := range pids {
			h, _ := r.open(pid)
			if h == nil {
				h = r.byPID[pid]
			}
			if h != nil && h.Signal(syscall.SIGKILL) == nil {
				killed++
			}
		}
		if err := r.Leaf.Freeze(false); err != nil && ferr == nil {
			ferr = err
		}
		r.Leaf.WaitEmpty(min(25*time.Millisecond, max(0, time.Until(deadline))))
	}
}
