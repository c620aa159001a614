//go:build linux || windows

package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/execpath"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// `tether exec`: the client asks the session's supervisor, over the
// session's exec endpoint (a Unix socket in its runtime dir on Linux, a
// named pipe on Windows), to run a command in the group, with the
// client's stdin, stdout and stderr (passed as SCM_RIGHTS on Linux,
// duplicated from the client by the supervisor on Windows).

// execRequest is what a client sends (on Linux after one byte that
// carries its stdio).
type execRequest struct {
	Path string   `json:"path"` // resolved by the client, with its PATH and cwd
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// TTY: stdin is a terminal the command takes as its controlling
	// terminal (tether exec -t); Unix only.
	TTY bool `json:"tty,omitempty"`
	// Stdio holds, on Windows, the client's handles for stdin, stdout
	// and stderr, which the supervisor duplicates from it.
	Stdio []uint64 `json:"stdio,omitempty"`
}

// execReply is the supervisor's answer: first Token (or Error and Code),
// then Exit once the command has exited.
type execReply struct {
	Token string        `json:"token,omitempty"`
	Error string        `json:"error,omitempty"`
	Code  int           `json:"code,omitempty"`
	Exit  *receipt.Exit `json:"exit,omitempty"`
}

// execServer runs `tether exec` requests in the session's group.
type execServer struct {
	c     *contain.Cmd
	ln    execListener
	conns sync.WaitGroup
}

// execListener is the supervisor's exec endpoint.
type execListener interface {
	accept() (execConn, error)
	close() error
}

// execConn is one client's connection, as the supervisor sees it.
type execConn interface {
	io.ReadWriteCloser
	// begin admits the client (the session's own user, or root) and
	// reads what comes before the request (Linux: the stdio).
	begin() error
	// deadline bounds the reads of the request (zero: none).
	deadline(t time.Time)
	// stdio returns the client's stdin, stdout and stderr.
	stdio(req *execRequest) ([]*os.File, error)
}

func (s *execServer) accept() {
	for {
		conn, err := s.ln.accept()
		if err != nil {
			return // closed
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			defer conn.Close()
			s.handle(conn)
		}()
	}
}

// close stops accepting and gives the commands under way a moment to
// report how they ended: the stop that precedes it has killed them.
func (s *execServer) close() {
	s.ln.close()
	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
}

func (s *execServer) handle(conn execConn) {
	enc := json.NewEncoder(conn)
	fail := func(code int, err error) { enc.Encode(execReply{Error: err.Error(), Code: code}) }
	if err := conn.begin(); err != nil {
		fail(125, err)
		return
	}
	conn.deadline(time.Now().Add(10 * time.Second))
	var req execRequest
	if err := json.NewDecoder(conn).Decode(&req); err != nil || len(req.Argv) == 0 || req.Path == "" {
		fail(125, fmt.Errorf("session: bad exec request: %v", err))
		return
	}
	conn.deadline(time.Time{})
	stdio, err := conn.stdio(&req)
	if err != nil {
		fail(125, err)
		return
	}
	defer func() {
		for _, f := range stdio {
			f.Close()
		}
	}()
	ec := &exec.Cmd{Path: req.Path, Args: req.Argv, Env: req.Env, Dir: req.Dir, Stdin: stdio[0], Stdout: stdio[1], Stderr: stdio[2]}
	if req.TTY {
		if ec.SysProcAttr, err = ttyAttr(); err != nil {
			fail(125, err)
			return
		}
	}
	m, err := s.c.Join(ec)
	if err != nil {
		fail(contain.StartErrorCode(err), err)
		return
	}
	for _, f := range stdio {
		f.Close() // the command has its own copies
	}
	stdio = nil
	enc.Encode(execReply{Token: m.Token()})
	exit := m.Wait()
	enc.Encode(execReply{Exit: &exit})
}

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
	sup, err := supervisorOf(rec)
	if err != nil {
		return failed, err
	}
	sup.Close()
	conn, err := dialExec(reg, rec)
	if err != nil {
		return failed, err
	}
	defer conn.Close()
	req := execRequest{Path: path, Argv: o.Argv, Env: env, Dir: o.Dir, TTY: o.Terminal}
	if err := conn.sendStdio(stdio, &req); err != nil {
		return failed, registry.Errorf(name, nil, "exec: %v", err)
	}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return failed, registry.Errorf(name, nil, "exec: %v", err)
	}
	dec := json.NewDecoder(conn)
	var started execReply
	if err := dec.Decode(&started); err != nil {
		return failed, registry.Errorf(name, nil, "exec: no answer from its supervisor: %v", err)
	}
	if started.Error != "" {
		return failed, &StartError{Code: started.Code, Err: errors.New(started.Error)}
	}
	stopFwd := forward(started.Token, sigs)
	defer stopFwd()
	var ended execReply
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
	sendStdio(stdio [3]*os.File, req *execRequest) error
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
