//go:build linux || windows

package session

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/execpath"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// `tether exec`: the client asks the session's supervisor, over the
// session's exec endpoint (a Unix socket in its runtime dir on Linux, a
// named pipe on Windows), to run a command in the group, with the
// client's stdin, stdout and stderr (passed as SCM_RIGHTS on Linux,
// duplicated from the client by the supervisor on Windows).

// Exec runs argv in the live session name, as a member of its group: the
// session's supervisor clones it into the session's cgroup, so what it
// starts is the session's, held and stopped with it, whatever the caller
// does next. It gets stdio, env with the session's own variables set over
// it (Env), and dir as its working directory. Signals from sigs are
// forwarded to it. Exec returns how it exited; the session goes on.
//
// It fails wrapping ErrEnded when the session has ended, ErrUnsupervised
// when its supervisor is gone, and contain.ErrNoJoin when the session
// has no cgroup (the fallback mechanism) or is stopping.
func execIn(reg *store.Registry, name string, o ExecOptions, stdio [3]*os.File, sigs <-chan os.Signal) (receipt.Exit, error) {
	failed := receipt.Exit{Code: 125, MainStatus: -1}
	rec, err := reg.Read(name)
	if err != nil {
		return failed, err
	}
	if !rec.Live() {
		return failed, registry.Errorf(name, ErrEnded, "%s", endedHow(rec))
	}
	env := overlay(overlay(withoutMarker(o.Env), recordEnv(reg, rec)), o.Set)
	path, err := execpath.Look(o.Argv[0], env, o.Dir)
	if err != nil {
		return failed, &StartError{Code: contain.StartErrorCode(err), Err: err}
	}
	sup, err := sessionctl.SupervisorOf(rec)
	if err != nil {
		return failed, err
	}
	sup.Close()
	conn, err := dialExec(reg, rec)
	if err != nil {
		return failed, err
	}
	defer conn.Close()
	req := sessionctl.ExecRequest{Path: path, Argv: o.Argv, Env: env, Dir: o.Dir, TTY: o.Terminal}
	if err := conn.sendStdio(stdio, &req); err != nil {
		return failed, registry.Errorf(name, nil, "exec: %v", err)
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return failed, registry.Errorf(name, nil, "exec: %v", err)
	}
	dec := json.NewDecoder(conn)
	var started sessionctl.ExecReply
	if err := dec.Decode(&started); err != nil {
		return failed, registry.Errorf(name, nil, "exec: no answer from its supervisor: %v", err)
	}
	if started.Error != "" {
		return failed, &StartError{Code: started.Code, Err: errors.New(started.Error)}
	}
	stopFwd := forward(started.Token, sigs)
	defer stopFwd()
	var ended sessionctl.ExecReply
	if err := dec.Decode(&ended); err != nil || ended.Exit == nil {
		return failed, registry.Errorf(name, nil, "exec: the supervisor ended before the command's exit was reported (%v)", err)
	}
	return *ended.Exit, nil
}

// execClient is a client's connection to the supervisor.
type execClient interface {
	io.ReadWriteCloser
	// sendStdio passes stdio to the supervisor: before the request
	// (Linux), or in it (Windows).
	sendStdio(stdio [3]*os.File, req *sessionctl.ExecRequest) error
}

// forward sends the signals from sigs to the member token names, through
// a pidfd, until the returned func is called.
func forward(token string, sigs <-chan os.Signal) func() {
	done := make(chan struct{})
	tok, err := identity.Parse(token)
	if err != nil || sigs == nil {
		return func() {}
	}
	h, err := identity.Open(tok)
	if err != nil {
		return func() {}
	}
	go func() {
		for {
			select {
			case s := <-sigs:
				if sig, ok := s.(syscall.Signal); ok {
					h.Signal(forwarded(sig))
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		h.Close()
	}
}

// withoutMarker drops the fallback mechanism's group marker of an outer
// run: the command belongs to the session, not to that run.
func withoutMarker(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if key(kv) != store.MarkerEnv {
			out = append(out, kv)
		}
	}
	return out
}

// endedHow says how an ended session ended.
func endedHow(rec *registry.Record) string {
	s := "has ended (" + rec.State
	if rec.StopReason != "" {
		s += ": " + rec.StopReason
	}
	return s + ")"
}
