package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
	"golang.org/x/sys/unix"
)

// execSocket is the supervisor's socket for `tether exec`, in the
// session's runtime dir (0700, the user's).
const execSocket = "tether.sock"

// execRequest is what a client sends, after one byte that carries its
// stdin, stdout and stderr (SCM_RIGHTS).
type execRequest struct {
	Path string   `json:"path"` // resolved by the client, with its PATH and cwd
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
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
	ln    *net.UnixListener
	conns sync.WaitGroup
}

// serveExec listens on the session's exec socket. It binds through
// /proc/self/fd, so that a runtime dir too long for sun_path still works.
func serveExec(c *contain.Cmd, rt string) (*execServer, error) {
	dir, err := os.Open(rt)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	path := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + execSocket
	os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("session: exec socket %s: %w", filepath.Join(rt, execSocket), err)
	}
	ln.SetUnlinkOnClose(false) // its name was the /proc path; the dir goes with the session
	s := &execServer{c: c, ln: ln}
	go s.accept()
	return s, nil
}

func (s *execServer) accept() {
	for {
		conn, err := s.ln.AcceptUnix()
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
	s.ln.Close()
	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
}

func (s *execServer) handle(conn *net.UnixConn) {
	enc := json.NewEncoder(conn)
	fail := func(code int, err error) { enc.Encode(execReply{Error: err.Error(), Code: code}) }
	if err := checkPeer(conn); err != nil {
		fail(125, err)
		return
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	stdio, err := recvStdio(conn)
	if err != nil {
		fail(125, err)
		return
	}
	defer func() {
		for _, f := range stdio {
			f.Close()
		}
	}()
	var req execRequest
	if err := json.NewDecoder(conn).Decode(&req); err != nil || len(req.Argv) == 0 || req.Path == "" {
		fail(125, fmt.Errorf("session: bad exec request: %v", err))
		return
	}
	conn.SetReadDeadline(time.Time{})
	ec := &exec.Cmd{Path: req.Path, Args: req.Argv, Env: req.Env, Dir: req.Dir, Stdin: stdio[0], Stdout: stdio[1], Stderr: stdio[2]}
	m, err := s.c.Join(ec)
	if err != nil {
		fail(contain.StartErrorCode(err), err)
		return
	}
	for _, f := range stdio {
		f.Close() // the command has its own copies
	}
	stdio = nil
	enc.Encode(execReply{Token: m.Token.String()})
	exit := m.Wait()
	enc.Encode(execReply{Exit: &exit})
}

// checkPeer admits the session's own user and root.
func checkPeer(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cerr != nil {
		return cerr
	}
	if cred.Uid != 0 && int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("session: uid %d may not exec in a session of uid %d", cred.Uid, os.Geteuid())
	}
	return nil
}

// recvStdio reads the one byte that carries the client's three stdio
// descriptors.
func recvStdio(conn *net.UnixConn) ([]*os.File, error) {
	b, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(3*4))
	_, oobn, _, _, err := conn.ReadMsgUnix(b, oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	files := make([]*os.File, 0, len(fds))
	for i, fd := range fds {
		files = append(files, os.NewFile(uintptr(fd), "stdio"+strconv.Itoa(i)))
	}
	if err != nil || len(files) != 3 {
		for _, f := range files {
			f.Close()
		}
		return nil, fmt.Errorf("session: exec request without its 3 stdio descriptors (%d, %v)", len(fds), err)
	}
	return files, nil
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
func execIn(reg *registry.Registry, name string, argv, env []string, dir string, stdio [3]*os.File, sigs <-chan os.Signal) (receipt.Exit, error) {
	failed := receipt.Exit{Code: 125, MainStatus: -1}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return failed, &StartError{Code: contain.StartErrorCode(err), Err: err}
	}
	if !filepath.IsAbs(path) {
		if path, err = filepath.Abs(path); err != nil {
			return failed, err
		}
	}
	rec, err := reg.Read(name)
	if err != nil {
		return failed, err
	}
	if !rec.Live() {
		return failed, registry.Errorf(name, ErrEnded, "%s", endedHow(rec))
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
	files := []int{int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())}
	if _, _, err := conn.WriteMsgUnix([]byte{0}, unix.UnixRights(files...), nil); err != nil {
		return failed, registry.Errorf(name, nil, "exec: %v", err)
	}
	env = overlay(withoutMarker(env), recordEnv(rec))
	if err := json.NewEncoder(conn).Encode(execRequest{Path: path, Argv: argv, Env: env, Dir: dir}); err != nil {
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

// dialExec connects to the session's exec socket through /proc/self/fd:
// no sun_path limit, and no symlink in the runtime dir is followed.
func dialExec(reg *registry.Registry, rec *registry.Record) (*net.UnixConn, error) {
	if err := reg.CheckDir(rec.RuntimeDir); err != nil {
		return nil, err
	}
	fd, err := unix.Open(rec.RuntimeDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: rec.RuntimeDir, Err: err}
	}
	defer unix.Close(fd)
	addr := &net.UnixAddr{Name: "/proc/self/fd/" + strconv.Itoa(fd) + "/" + execSocket, Net: "unix"}
	conn, err := net.DialUnix("unix", nil, addr)
	if err != nil {
		return nil, registry.Errorf(rec.Name, nil, "takes no exec requests (its supervisor predates tether exec, or is ending): %v", err)
	}
	return conn, nil
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
				if sig, ok := s.(unix.Signal); ok {
					h.Signal(sig)
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
		if key(kv) != "TETHER_GROUP_MARKER" {
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
