//go:build linux || windows || darwin

package supervisor

import (
	"sync"
	"time"

	"github.com/tether-run/tether/internal/sessionlog"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// recorder serializes a supervisor's changes to its session's record:
// the supervisor's main goroutine, the stop protocol's BeforeStop and the
// log's loss watcher all change it.
type recorder struct {
	mu  sync.Mutex
	reg *store.Registry
	rec *registry.Record
}

// update applies f to the record and writes it.
func (w *recorder) update(f func(r *registry.Record)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w.rec)
	w.rec.UpdatedAt = time.Now().UTC()
	return w.reg.Write(w.rec)
}

// watchLoss keeps the record's output_loss current while the session
// runs, writing it at most once a second, until stop is closed; it closes
// done when it returns. A record write can fail for the reason the log
// did (a full disk): it is retried each second until it lands.
func (w *recorder) watchLoss(log *sessionlog.Log, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case <-log.Lost():
		}
		for {
			loss := log.Loss()
			err := w.update(func(r *registry.Record) { r.OutputLoss = loss })
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			if err == nil {
				break
			}
		}
	}
}
