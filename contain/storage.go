package contain

import (
	"slices"
	"sync"
	"time"

	"github.com/tether-run/tether/internal/census"
	"github.com/tether-run/tether/receipt"
)

// storageWatch takes the censuses of a run's storage ceilings while it
// runs (a goroutine of its own: a census may take up to census.Bound, and
// the run's end must not wait for it) and stops the group, with reason
// ReasonStorage, when one is crossed or fails.
type storageWatch struct {
	mu   sync.Mutex
	figs []receipt.Storage
	quit chan struct{} // closed when the run's end is decided
	done chan struct{} // closed when the goroutine has returned
}

// watchStorage starts the censuses of the ceilings the hooks carry; nil
// when there are none (no goroutine: nothing on the path of a run
// without them).
func (c *Cmd) watchStorage() *storageWatch {
	if len(c.hooks.Storage) == 0 {
		return nil
	}
	w := &storageWatch{figs: slices.Clone(c.hooks.Storage), quit: make(chan struct{}), done: make(chan struct{})}
	every := c.hooks.StorageEvery
	if every <= 0 {
		every = census.Every
	}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-w.quit:
				return
			case <-t.C:
			}
			if !w.take(false) {
				select {
				case <-w.quit: // the run ended meanwhile: its reason stands
				default:
					c.BeginStop(ReasonStorage)
				}
				return
			}
		}
	}()
	return w
}

// take runs one census of every ceiling and records it (as the last one
// when final); it reports whether every census completed within its
// ceiling.
func (w *storageWatch) take(final bool) bool {
	ok := true
	for i := range w.figs {
		w.mu.Lock()
		path := w.figs[i].Path
		w.mu.Unlock()
		n, err := census.Count(path, census.Bound)
		now := time.Now().UTC()
		w.mu.Lock()
		f := &w.figs[i]
		f.Censuses++
		switch {
		case err != nil:
			ok = false
			if f.Error == "" {
				f.Error = err.Error()
			}
		default:
			if n > f.Peak {
				f.Peak, f.PeakAt = n, now
			}
			if n > f.LimitBytes {
				f.Exceeded, ok = true, false
			}
		}
		if final {
			f.After, f.AfterAt = n, now
			if err != nil {
				f.After = -1
			}
		}
		w.mu.Unlock()
	}
	return ok
}

// halt ends the censuses once the run's end is decided.
func (w *storageWatch) halt() {
	if w != nil {
		close(w.quit)
	}
}

// endStorage takes the last census, once the group is stopped, and puts
// every figure in the receipt.
func (c *Cmd) endStorage() {
	w := c.storage
	if w == nil {
		return
	}
	<-w.done
	w.take(true)
	c.mu.Lock()
	c.rec.Storage = w.figs
	c.mu.Unlock()
}
