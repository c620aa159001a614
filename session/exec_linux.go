package session

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
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// execSocket is the supervisor's socket for `tether exec`, in the
// session's runtime dir (0700, the user's).
const execSocket = "tether.sock"

// forwarded is the signal tether exec sends its command for sig: sig.
func forwarded(sig syscall.Signal) syscall.Signal { return sig }

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
	path := "/proc/self/fd/" + strconv.Itoa(int(dir.Fd())) + "/" + execSocket
	os.Remove(path)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("session: exec socket %s: %w", filepath.Join(rt, execSocket), err)
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
func (c *unixConn) stdio(*execRequest) ([]*os.File, error) {
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

// unixClient is the client's end of the exec socket.
type unixClient struct{ *net.UnixConn }

// sendStdio passes stdio as SCM_RIGHTS on one byte, before the request.
func (c unixClient) sendStdio(stdio [3]*os.File, _ *execRequest) error {
	files := []int{int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())}
	_, _, err := c.WriteMsgUnix([]byte{0}, unix.UnixRights(files...), nil)
	return err
}

// dialExec connects to the session's exec socket through /proc/self/fd:
// no sun_path limit, and no symlink in the runtime dir is followed.
func dialExec(reg *store.Registry, rec *registry.Record) (execClient, error) {
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
	return unixClient{conn}, nil
}
