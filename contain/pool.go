package contain

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/registry"
)

// admitPool admits the run to its pool (hooks.Pool) and writes its
// record at once, in one critical section under the registry's lock, so
// that a concurrent admission counts it: at most PoolMax live members,
// runs and sessions together, whatever the number of callers. It waits
// up to PoolWait for a slot, polling with jitter.
func (c *Cmd) admitPool(t *tracker) error {
	pool, max := c.hooks.Pool, c.hooks.PoolMax
	if err := registry.CheckPool(pool); err != nil {
		return err
	}
	if max <= 0 {
		max = math.MaxInt // a member without a bound of its own: counted by others
	}
	deadline := time.Now().Add(c.hooks.PoolWait)
	for {
		n, err := c.tryPool(t, pool, max)
		if err != nil || n < max {
			return err
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%w: %q has %d live members (--max %d)", registry.ErrPoolFull, pool, n, max)
		}
		time.Sleep(min(time.Until(deadline), 20*time.Millisecond+rand.N(60*time.Millisecond)))
	}
}

// tryPool counts the pool's live members under the lock and, when there
// are fewer than max, writes t's record as a member. It returns the count
// before it.
func (c *Cmd) tryPool(t *tracker, pool string, max int) (int, error) {
	unlock, err := t.reg.Lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	recs, _ := t.reg.ListLive()
	n := 0
	for _, r := range recs {
		if r.Pool == pool && holdsSlot(r) {
			n++
		}
	}
	if n >= max {
		return n, nil
	}
	t.rec.Pool = pool
	return n, t.write()
}

// holdsSlot reports whether a live record holds a slot of its pool: its
// holder (a run's tether, a session's supervisor) is proven running, or
// it is a session still starting (its supervisor not recorded yet, for a
// minute). A dead holder's slot is free at once; what it left is the
// owner-death watcher's and tether reap's to stop.
func holdsSlot(r *registry.Record) bool {
	if !r.Live() {
		return false
	}
	if tok, err := identity.Parse(r.Supervisor); err == nil {
		if h, err := identity.Open(tok); err == nil {
			h.Close()
			return true
		}
		return false
	}
	return r.State == registry.StateStarting && time.Since(r.CreatedAt) < time.Minute
}
