//go:build linux || windows || darwin

package session

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/sessionlog"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// Logs writes session name's log to w as o asks: every file of it kept,
// oldest first. With o.Follow it goes on writing what is appended,
// following the log by name across rotations, and returns once the
// session has ended and all it wrote was written (nil), or once its
// supervisor is gone without ending it (an error wrapping
// ErrUnsupervised): nothing will write the log again. Gaps (output
// dropped, files rotated away unread) are reported to o.Notes.
//
// On Linux it sleeps on inotify (the log file followed, the log directory
// for rotations, the session's record) and on the supervisor's pidfd,
// never on a timer: following an idle session costs no wake-ups. On
// Windows it polls (followWatch).
func logs(ctx context.Context, reg *store.Registry, name string, w io.Writer, o LogOptions) error {
	read := func() (*registry.Record, error) { return reg.Read(name) }
	if o.Run != "" {
		// One run's log (issue 27): followed, that run's record is read.
		rec, err := reg.FindRun(name, o.Run)
		if err != nil {
			return err
		}
		read = func() (*registry.Record, error) { return reg.FindRun(name, rec.RunID) }
	}
	rec, err := read()
	if err != nil {
		return err
	}
	path := reg.LogOf(rec)
	var fw *followWatch
	if o.Follow {
		// Watched before the log is opened, so that no change is missed.
		if fw, err = watchFollow(filepath.Dir(path), filepath.Join(reg.Dir, "records"), filepath.Join(reg.Dir, "ended")); err != nil {
			return err
		}
		defer fw.Close()
		if err := fw.wakeOn(ctx); err != nil {
			return err
		}
	}
	v := sessionlog.NewView(rec.Name, w, o.view())
	t, err := sessionlog.OpenTail(path, v)
	if err != nil {
		return fmt.Errorf("session %q: log: %w", rec.Name, err)
	}
	defer t.Close()
	v.EndInitial()
	if !o.Follow {
		return v.Finish(rec)
	}
	var sup *identity.Handle
	defer func() {
		if sup != nil {
			sup.Close()
		}
	}()
	for v.Err() == nil {
		// A write between the last read and a new watch is read here.
		for {
			moved, err := fw.watchFile(t.File())
			if err != nil {
				return err
			}
			if !moved {
				break
			}
			if err := t.Drain(); err != nil {
				return err
			}
		}
		if rec, err = read(); err != nil {
			return err
		}
		if !rec.Live() {
			return drainEnd(t, v, rec)
		}
		if sup == nil && rec.Supervisor != "" {
			if sup, err = sessionctl.SupervisorOf(rec); err != nil {
				return gone(read, t, v, err)
			}
		}
		if sup == nil && time.Since(rec.CreatedAt) > superviseTimeout {
			return registry.Errorf(name, ErrUnsupervised, "unsupervised: no supervisor recorded since %s", rec.CreatedAt.Format(time.RFC3339))
		}
		if sup != nil && sup.Exited() {
			return gone(read, t, v, registry.Errorf(name, ErrUnsupervised, "unsupervised: its supervisor exited without ending it; `tether reap` reclaims it"))
		}
		v.CaughtUp()
		if err := fw.await(sup); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := t.Drain(); err != nil {
			return err
		}
	}
	return v.Err()
}

// drainEnd writes the rest of an ended session's log.
func drainEnd(t *sessionlog.Tail, v *sessionlog.View, rec *registry.Record) error {
	if err := t.Drain(); err != nil {
		return err
	}
	return v.Finish(rec)
}

// superviseTimeout is how long a session may stay "starting" without a
// supervisor on record: Start gives up on its supervisor after as long.
const superviseTimeout = 2 * time.Minute

// gone ends a follow whose supervisor is gone: the rest of the log is
// written, and err returned unless the session did end (the supervisor
// recorded the end just before it exited).
func gone(read func() (*registry.Record, error), t *sessionlog.Tail, v *sessionlog.View, err error) error {
	if derr := t.Drain(); derr != nil {
		return derr
	}
	rec, rerr := read()
	if rerr == nil && !rec.Live() {
		return drainEnd(t, v, rec)
	}
	if ferr := v.Finish(rec); ferr != nil {
		return ferr
	}
	return err
}
