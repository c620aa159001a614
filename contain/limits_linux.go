package contain

import (
	"errors"
	"fmt"
	"sort"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/budget"
	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/receipt"
)

// applyLimits writes the budget before anything starts. A failure removes
// the v1 leaves it created; the start's failure path removes the v2 leaf.
func (c *Cmd) applyLimits() error {
	if c.Limits.IsZero() {
		return nil
	}
	b, err := budget.Apply(c.Limits, c.leaf, c.BestEffortLimits)
	if b != nil {
		c.sys.v1Leaves = sortedValues(b.V1Dirs())
		c.rec.Limits = c.limitsReceipt(b)
	}
	c.sys.budget = b // failStart restores what it enabled in the parent
	if err != nil {
		if b != nil {
			b.Remove()
		}
		return err
	}
	return nil
}

// limitsReceipt is the budget's receipt with every v1 leaf the run
// created, removed or not.
func (c *Cmd) limitsReceipt(b *budget.Budget) *receipt.Limits {
	r := b.Receipt()
	r.V1Leaves = c.sys.v1Leaves
	if c.sys.v1Verified {
		r.V1PlacementVerifiedBy = "spawner-thread-before-fork"
	}
	return r
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// removeBudget removes the v1 leaves of a start that failed before
// anything ran in them.
func (c *Cmd) removeBudget() {
	if b := c.sys.budget; b != nil {
		if err := b.Remove(); err != nil && c.rec.Error == "" {
			c.rec.Error = err.Error()
		}
		c.rec.Limits = c.limitsReceipt(b)
	}
}

// joinV1 moves the spawner thread into the run's v1 leaves, so that the
// process it forks is born in them: v1 membership is per thread and
// inherited at fork, so the command never runs outside its budget, with
// no helper process. back returns the thread to where it was.
func (c *Cmd) joinV1() (back func() error, err error) {
	noop := func() error { return nil }
	if c.sys.budget == nil || len(c.sys.budget.V1Dirs()) == 0 {
		return noop, nil
	}
	tid := unix.Gettid()
	orig, err := cgroup.ThreadV1(tid)
	if err != nil {
		return noop, err
	}
	var joined []string
	back = func() error {
		var errs []error
		for _, ctrl := range joined {
			errs = append(errs, cgroup.MoveThreadV1(orig[ctrl], tid))
		}
		return errors.Join(errs...)
	}
	dirs := c.sys.budget.V1Dirs()
	for ctrl, dir := range dirs {
		if err := cgroup.MoveThreadV1(dir, tid); err != nil {
			back()
			return noop, fmt.Errorf("contain: join v1 %s leaf: %w", ctrl, err)
		}
		joined = append(joined, ctrl)
	}
	// Prove the thread is in every leaf before it forks: the child is born
	// in the forking thread's cgroups. The child itself cannot be checked
	// reliably afterwards: once it exits, /proc/PID/cgroup shows the v1
	// roots (its v2 line still names the leaf).
	now, err := cgroup.ThreadV1(tid)
	if err != nil {
		back()
		return noop, err
	}
	for ctrl, dir := range dirs {
		if now[ctrl] != dir {
			back()
			return noop, fmt.Errorf("%w: spawner thread is in v1 %s cgroup %q, want %q", ErrPlacement, ctrl, now[ctrl], dir)
		}
	}
	c.sys.v1Verified = true
	return back, nil
}

// finishLimits reads the budget's outcome and removes its v1 leaves; call
// once the group is confirmed empty. ok is false when there is no budget.
func (p *protocol) finishLimits() (obs string, ok bool, err error) {
	b := p.c.sys.budget
	if b == nil {
		return "", false, nil
	}
	b.Outcome()
	err = errors.Join(p.c.sys.v1Err, b.Remove())
	p.limits = p.c.limitsReceipt(b)
	n := strconv.Itoa(len(b.V1Dirs()))
	return "read the budget's counters; removed v1 leaves (" + n + " left)", true, err
}
