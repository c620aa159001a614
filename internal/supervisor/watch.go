//go:build linux || windows || darwin

package supervisor

import (
	"encoding/json"
	"os"
	"syscall"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
)

// watcher turns owner death and stop requests into the Cmd's stop.
//
// The first request (or the owner's death, or the session's own end)
// begins the stop with that request's grace. A later request joins it:
// its `tether stop` waits for the same end and reports the same receipt.
// Only a request with Kill or no grace (`--kill`, `--grace 0`) changes a
// stop under way: it kills at once, sessions the session owns included.
type watcher struct {
	c      *contain.Cmd
	reg    *store.Registry // where requests are left (RequestsDir)
	self   string          // our supervisor token
	reason chan string
	done   chan struct{} // closed when the session has ended
	begun  bool
}

func (w *watcher) watch(owner *identity.Handle, sigs chan os.Signal) {
	ownerDied := make(chan struct{})
	if owner != nil {
		go func() {
			for {
				if owner.WaitExit(time.Hour) {
					close(ownerDied)
					return
				}
				select {
				case <-w.done:
					return
				default:
				}
			}
		}()
	}
	for {
		select {
		case <-w.done:
			return
		case <-ownerDied:
			ownerDied = nil
			w.apply(sessionctl.StopRequest{Reason: "owner-exit"})
		case sig := <-sigs:
			// Signals coalesce: one may stand for several requests. A
			// signal without a request file (sent by hand, or by a stop
			// that could not write one) is a plain request, or with
			// SIGINT one without grace.
			reqs := w.requests()
			if len(reqs) == 0 {
				r := sessionctl.StopRequest{Reason: "request"}
				if sig == syscall.SIGINT {
					r.GraceMS = -1
				}
				reqs = []sessionctl.StopRequest{r}
			}
			for _, r := range reqs {
				w.apply(r)
			}
		}
	}
}

// apply acts on one request, under the rules in watcher's comment.
func (w *watcher) apply(req sessionctl.StopRequest) {
	first := !w.begun
	if first {
		w.begun = true
		if req.Reason == "" {
			req.Reason = "request"
		}
		w.reason <- req.Reason
	}
	// A stop the Cmd began itself (TTL, the main process's end) counts as
	// under way: the request joins it.
	under := !first || w.c.Stopping()
	switch {
	case req.Kill || (req.GraceMS < 0 && under):
		w.c.Kill()
	case req.GraceMS < 0:
		w.c.SetGrace(contain.NoGrace)
	case req.GraceMS > 0 && !under:
		w.c.SetGrace(time.Duration(req.GraceMS) * time.Millisecond)
	}
	w.c.BeginStop(contain.ReasonRequest)
}

// requests reads and removes the request files named for this
// supervisor, oldest first (the time follows the prefix).
func (w *watcher) requests() []sessionctl.StopRequest {
	var out []sessionctl.StopRequest
	for _, b := range w.reg.TakeRequests(sessionctl.RequestPrefix(w.self), store.MaxRequest) {
		var req sessionctl.StopRequest
		if json.Unmarshal(b, &req) != nil || req.Supervisor != w.self {
			continue
		}
		out = append(out, req)
	}
	return out
}
