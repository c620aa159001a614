//go:build linux || windows

package supervisor

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/sessionctl"
)

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
	stdio(req *sessionctl.ExecRequest) ([]*os.File, error)
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
	fail := func(code int, err error) { enc.Encode(sessionctl.ExecReply{Error: err.Error(), Code: code}) }
	if err := conn.begin(); err != nil {
		fail(125, err)
		return
	}
	conn.deadline(time.Now().Add(10 * time.Second))
	var req sessionctl.ExecRequest
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
	enc.Encode(sessionctl.ExecReply{Token: m.Token()})
	exit := m.Wait()
	enc.Encode(sessionctl.ExecReply{Exit: &exit})
}
