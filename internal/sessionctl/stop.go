//go:build linux || windows || darwin

package sessionctl

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// StopMany stops the named sessions together: it asks every supervisor
// first, then waits for them all under one deadline (wait), so that n
// sessions take as long as the slowest, not the sum. Once kill is closed,
// the stops not yet ended are escalated (their members are killed at once);
// once abandon is closed, StopMany stops waiting and reports those stops as
// ErrStillStopping (their supervisors go on with them). Nil channels never
// fire. progress, if set, is called with each step of each supervisor's
// stop protocol as the supervisor records it. Every session is attempted
// even when one fails.
func StopMany(reg *store.Registry, names []string, req StopRequest, wait time.Duration, kill, abandon <-chan struct{}, progress func(name string, step receipt.Step)) []StopResult {
	out := make([]StopResult, len(names))
	var waits []*stopping
	for i, name := range names {
		out[i].Name = name
		s, err := requestStop(reg, name, req)
		switch {
		case errors.Is(err, ErrUnsupervised):
			out[i].Receipt, out[i].Err = stopUnsupervised(reg, name, req, err)
		case err != nil:
			out[i].Err = err
		case s == nil:
			out[i].Receipt, out[i].Err = endedReceipt(reg, name)
		default:
			s.i = i
			waits = append(waits, s)
		}
	}
	if len(waits) > 0 {
		go warmReceiptDecoder()
	}
	deadline := time.Now().Add(wait)
	killed := false
	for len(waits) > 0 {
		select {
		case <-abandon:
			for _, s := range waits {
				out[s.i].Err = registry.Errorf(s.name, ErrStillStopping, "still stopping: stopped waiting; its supervisor goes on stopping it")
				s.sup.Close()
				s.progress.close()
			}
			return out
		default:
		}
		if !killed {
			select {
			case <-kill:
				killed = true
				for _, s := range waits {
					s.send(StopRequest{Reason: req.Reason, Kill: true})
				}
			default:
			}
		}
		left := time.Until(deadline)
		if left <= 0 {
			for _, s := range waits {
				out[s.i].Err = registry.Errorf(s.name, ErrStillStopping, "still stopping after %s: its supervisor goes on", wait)
				s.sup.Close()
				s.progress.close()
			}
			return out
		}
		// Wait on one in short slices, so that the channels are seen.
		waits[0].sup.WaitExit(min(left, 50*time.Millisecond))
		keep := waits[:0]
		for _, s := range waits {
			exited := s.sup.Exited() // before the read: every step it wrote is then there
			if progress != nil {
				for _, step := range s.progress.next() {
					progress(s.name, step)
				}
			}
			if !exited {
				keep = append(keep, s)
				continue
			}
			s.sup.Close()
			s.progress.close()
			s.forget()
			out[s.i].Receipt, out[s.i].Err = s.result(reg)
		}
		waits = keep
	}
	return out
}

// warmReceiptDecoder has encoding/json build its decoder for a receipt
// while the caller waits for its supervisors to stop, on the core that
// waiting leaves idle: built at the first decode, after the supervisor
// exited, it cost a fresh `tether stop` 0.6–0.9 ms on its path; warmed,
// that decode takes 55–75 µs (issue 30). The zero receipt's round trip
// reaches every type the decoder of a written one needs.
func warmReceiptDecoder() {
	b, err := json.Marshal(&receipt.Receipt{})
	if err == nil {
		json.Unmarshal(b, new(receipt.Receipt))
	}
}

// stopping is a stop requested of a supervisor that had not yet exited.
type stopping struct {
	reg   *store.Registry
	i     int
	name  string
	rec   *registry.Record // as read when the stop was requested
	sup   *identity.Handle
	werr  error    // a request that could not be written (the signals went anyway)
	files []string // the request files it left, removed once it ended
	// progress reads the steps the supervisor reports as it stops.
	progress progressReader
}

// requestStop leaves req in the requests dir and signals the session's
// supervisor. It returns nil (and no error) for a session that has
// already ended.
func requestStop(reg *store.Registry, name string, req StopRequest) (*stopping, error) {
	rec, err := reg.Read(name)
	if err != nil {
		return nil, err
	}
	if !rec.Live() {
		return nil, nil
	}
	if rec.Supervisor == "" && rec.State == registry.StateStarting {
		return nil, registry.Errorf(name, ErrStarting, "still starting (no supervisor yet); try again")
	}
	h, err := SupervisorOf(rec)
	if err != nil {
		return nil, err
	}
	s := &stopping{reg: reg, name: name, rec: rec, sup: h, progress: progressReader{path: filepath.Join(rec.RuntimeDir, ProgressFile)}}
	if err := s.send(req); err != nil {
		if h.Exited() {
			return s, nil // it ended meanwhile and released its runtime dir
		}
		s.forget()
		h.Close()
		return nil, err
	}
	return s, nil
}

// send leaves one request file in the state dir's requests dir (stop-*.json,
// named for its supervisor: concurrent stops never overwrite each other's)
// and wakes the supervisor, which takes every request file named for it on
// each wake-up.
func (s *stopping) send(req StopRequest) error {
	req.Supervisor = s.rec.Supervisor
	b, _ := json.Marshal(req)
	name := RequestPrefix(s.rec.Supervisor) + strconv.FormatInt(time.Now().UnixNano(), 10) + "-" + randid.Hex(6) + ".json"
	// A request that cannot be written (a full or read-only state disk)
	// must not make the session unstoppable: the wake-up alone is a
	// plain request, and the urgent one (SIGINT on Unix: two SIGTERMs
	// may merge) asks for no grace. The supervisor is proven by its
	// pidfd, not by anything in the dir. Atomic, not synced: the
	// supervisor reads it at once, and after a reboot there is nothing to
	// stop (issue 13: the syncs were a millisecond of every stop on a
	// disk).
	werr := s.reg.PutRequest(name, b)
	if werr == nil {
		s.files = append(s.files, name)
	}
	if err := Wake(s.sup, false); err != nil && !errors.Is(err, identity.ErrGone) {
		return err
	}
	if werr != nil {
		s.werr = werr
		if req.Kill || req.GraceMS < 0 {
			Wake(s.sup, true)
		}
	}
	return nil
}

// forget removes the request files s left that its supervisor did not
// take: it ended before it read them, or exited between reading and
// taking them.
func (s *stopping) forget() {
	for _, f := range s.files {
		s.reg.RemoveRequest(f)
	}
	s.files = nil
}

// RequestPrefix begins the name of every request file for the supervisor
// with token sup: a digest of the token, so that a supervisor lists only
// its own and never takes (and removes) another's.
func RequestPrefix(sup string) string {
	h := sha256.Sum256([]byte(sup))
	return StopRequestPrefix + hex.EncodeToString(h[:8]) + "-"
}

// result reads the receipt of a session whose supervisor has exited.
func (s *stopping) result(reg *store.Registry) (*receipt.Receipt, error) {
	rec, err := reg.Read(s.name)
	if err != nil {
		return nil, err
	}
	if rec.Supervisor != s.rec.Supervisor {
		// The name was claimed again once the session ended: its run is
		// one of the name's earlier ones now (issue 27).
		rec, err = reg.FindRun(s.name, s.rec.RunID)
		if err != nil || rec.RunID != s.rec.RunID {
			return nil, registry.Errorf(s.name, nil, "ended, and its name was taken by a new session; its run %s is no longer on record", s.rec.RunID)
		}
	}
	// A supervisor that died in its stop: its watcher (internal/watch)
	// finishes the stop, ends the record and frees the name (the runtime
	// dir goes last) within a second or two.
	if rec.Live() {
		for deadline := time.Now().Add(watchPatience); (rec.Live() || exists(rec.RuntimeDir)) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if again, err := reg.Read(s.name); err == nil && again.Supervisor == s.rec.Supervisor {
				rec = again
			}
		}
	}
	if rec.Live() {
		why := "it was killed, or could not write the state dir"
		if s.werr != nil {
			why = "the state dir cannot be written: " + s.werr.Error()
		}
		return nil, registry.Errorf(s.name, ErrUnsupervised, "unsupervised: its supervisor exited without recording the end (%s); `tether reap` finishes the stop", why)
	}
	return ReadReceipt(reg, rec)
}

// stopUnsupervised stops a session whose supervisor is provably gone
// (killed: the OOM killer's favourite target) with the protocol, through
// what its record proves — its leaf held anew by its cgroup id, or its
// main process by its token — and returns the receipt (issue 24: `tether
// stop` refused, pointing at `tether reap`). The grace is the request's,
// else the session's own as its spec recorded it; --kill and --grace 0
// give none. why is the error that found it unsupervised, returned when
// nothing could be done.
func stopUnsupervised(reg *store.Registry, name string, req StopRequest, why error) (*receipt.Receipt, error) {
	o := reap.Options{Reason: "request", Grace: time.Duration(req.GraceMS) * time.Millisecond}
	if req.Kill || req.GraceMS < 0 {
		o.Grace = contain.NoGrace
	} else if o.Grace == 0 {
		if rec, err := reg.Read(name); err == nil {
			if spec, err := ReadSpec(reg, rec); err == nil && spec.Grace > 0 {
				o.Grace = spec.Grace
			}
		}
	}
	a := reap.Record(reg, name, o)
	switch {
	case a.Class == reap.Ended:
		return endedReceipt(reg, name) // it ended by itself meanwhile
	case a.Class == reap.Supervised:
		return nil, registry.Errorf(name, ErrStarting, "its supervisor came back to life or is still starting; try again")
	case a.Error != "":
		return a.Receipt, registry.Errorf(name, ErrUnsupervised, "unsupervised: its supervisor is gone, and stopping what it left failed: %s (%s)", a.Error, a.Plan)
	case a.Receipt == nil && !a.Done:
		return nil, why
	case a.Receipt == nil:
		return nil, registry.Errorf(name, ErrUnsupervised, "unsupervised: its supervisor is gone and nothing of it was left to stop (%s)", a.Plan)
	}
	return a.Receipt, nil
}

// endedReceipt returns the receipt of a session that has ended.
func endedReceipt(reg *store.Registry, name string) (*receipt.Receipt, error) {
	rec, err := reg.Read(name)
	if err != nil {
		return nil, err
	}
	return ReadReceipt(reg, rec)
}

// StopFamily stops the sessions owned by the supervisor with token sup
// before that supervisor's own group is stopped: all of them at once,
// under one deadline. A kill of the owner's stop (a later `stop --kill` or
// `--grace 0`) is passed on to them.
func StopFamily(reg *store.Registry, sup string, kill <-chan struct{}) {
	fam := Family(reg, sup)
	if len(fam) == 0 {
		return
	}
	names := make([]string, len(fam))
	for i, r := range fam {
		names[i] = r.Name
	}
	StopMany(reg, names, StopRequest{Reason: "request"}, familyWait, kill, nil, nil)
}

// exists reports whether path exists (the runtime dir: it goes once the
// record says stopped, and the name is free only then).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// watchPatience bounds how long a stop whose supervisor died waits for
// the watcher to end the session: its stop has a grace of at most
// watch.Grace and the kill wait.
const watchPatience = 10 * time.Second

// familyWait bounds the wait for the sessions a stopping session owns.
const familyWait = 2 * time.Minute

// StopRequest is what `tether stop` leaves in the state dir's requests
// dir, one file per request (RequestPrefix), before it signals the
// supervisor.
type StopRequest struct {
	// GraceMS is the grace in milliseconds: 0 the session's own, -1 none.
	GraceMS int64 `json:"grace_ms"`
	// Kill kills the members at once, also of a stop already under way.
	Kill   bool   `json:"kill,omitempty"`
	Reason string `json:"reason"`
	// Supervisor is the token of the supervisor the request is for: a
	// request left behind for an ended session is ignored by the next
	// session of the same name.
	Supervisor string `json:"supervisor"`
}

// StopResult is how the stop of one session ended.
type StopResult struct {
	Name    string
	Receipt *receipt.Receipt
	Err     error
}

// StopRequestPrefix begins the name of every request file.
const StopRequestPrefix = "stop-"
