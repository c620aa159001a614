package supervisor

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/peercred"
	"github.com/tether-run/tether/internal/sessionctl"
)

// ttyAttr makes the command's stdin its controlling terminal
// (contain.Join keeps Setctty and Ctty; Ctty is the child's fd 0).
func ttyAttr() (*syscall.SysProcAttr, error) {
	return &syscall.SysProcAttr{Setctty: true, Ctty: 0}, nil
}

// unixListener is the exec socket.
type unixListener struct{ ln *net.UnixListener }

func (l unixListener) accept() (execConn, error) {
	c, err := l.ln.AcceptUnix()
	if err != nil {
		return nil, err
	}
	return &unixConn{UnixConn: c}, nil
}

func (l unixListener) close() error { return l.ln.Close() }

// serveExec listens on the session's exec socket. It binds through
// /proc/self/fd, so that a runtime dir too long for sun_path still works.
func serveExec(c *contain.Cmd, rt string) (*execServer, error) {
	dir, err := os.Open(rt)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	path := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + sessionctl.ExecSocket
	os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("session: exec socket %s: %w", filepath.Join(rt, sessionctl.ExecSocket), err)
	}
	ln.SetUnlinkOnClose(false) // its name was the /proc path; the dir goes with the session
	s := &execServer{c: c, ln: unixListener{ln}}
	go s.accept()
	return s, nil
}

// unixConn is a client on the exec socket: its stdio arrives first, as
// SCM_RIGHTS on one byte.
type unixConn struct {
	*net.UnixConn
	files []*os.File
}

func (c *unixConn) begin() error {
	if err := checkPeer(c.UnixConn); err != nil {
		return err
	}
	c.UnixConn.SetReadDeadline(time.Now().Add(10 * time.Second))
	files, err := recvStdio(c.UnixConn)
	c.files = files
	return err
}

func (c *unixConn) deadline(t time.Time) { c.UnixConn.SetReadDeadline(t) }

// stdio hands on the stdio received: the caller closes it.
func (c *unixConn) stdio(*sessionctl.ExecRequest) ([]*os.File, error) {
	files := c.files
	c.files = nil
	return files, nil
}

// Close closes the connection and any stdio not handed on.
func (c *unixConn) Close() error {
	for _, f := range c.files {
		f.Close()
	}
	c.files = nil
	return c.UnixConn.Close()
}

// checkPeer admits the session's own user and root.
func checkPeer(conn *net.UnixConn) error {
	uid, err := peercred.UID(conn)
	if err != nil {
		return err
	}
	if uid != 0 && int(uid) != os.Geteuid() {
		return fmt.Errorf("session: uid %d may not exec in a session of uid %d", uid, os.Geteuid())
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
