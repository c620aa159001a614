package supervisor

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/sessionctl"
)

// ttyAttr refuses: a terminal for tether exec needs a pseudo console
// (ConPTY) on Windows, not built yet.
func ttyAttr() (*syscall.SysProcAttr, error) {
	return nil, fmt.Errorf("session: exec with a terminal: %w on Windows yet", errors.ErrUnsupported)
}

// pipeListener serves a session's exec pipe: one instance waits for a
// client at a time. Its DACL admits the user and SYSTEM; the first
// instance is created with FILE_FLAG_FIRST_PIPE_INSTANCE, so a pipe of
// that name made by anyone else first is refused; remote clients are
// rejected.
type pipeListener struct {
	name *uint16
	sa   *windows.SecurityAttributes

	mu     sync.Mutex
	closed bool
	next   windows.Handle // the instance waiting for a client
}

// serveExec creates the session's exec pipe and serves it.
func serveExec(c *contain.Cmd, _ string) (*execServer, error) {
	name, err := windows.UTF16PtrFromString(sessionctl.ExecPipe(c.RunID))
	if err != nil {
		return nil, err
	}
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("session: exec pipe: who am I: %w", err)
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;SY)(A;;GA;;;" + u.User.Sid.String() + ")")
	if err != nil {
		return nil, fmt.Errorf("session: exec pipe: %w", err)
	}
	l := &pipeListener{name: name, sa: &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}}
	if l.next, err = l.instance(true); err != nil {
		return nil, fmt.Errorf("session: exec pipe %s: %w", sessionctl.ExecPipe(c.RunID), err)
	}
	s := &execServer{c: c, ln: l}
	go s.accept()
	return s, nil
}

// instance creates one instance of the pipe.
func (l *pipeListener) instance(first bool) (windows.Handle, error) {
	flags := uint32(windows.PIPE_ACCESS_DUPLEX)
	if first {
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	mode := uint32(windows.PIPE_TYPE_BYTE | windows.PIPE_READMODE_BYTE | windows.PIPE_WAIT | windows.PIPE_REJECT_REMOTE_CLIENTS)
	h, err := windows.CreateNamedPipe(l.name, flags, mode, windows.PIPE_UNLIMITED_INSTANCES, 64<<10, 64<<10, 0, l.sa)
	if err != nil {
		return 0, os.NewSyscallError("CreateNamedPipe", err)
	}
	return h, nil
}

var errListenerClosed = errors.New("session: exec pipe closed")

// accept waits for a client on the waiting instance, then makes the next.
func (l *pipeListener) accept() (execConn, error) {
	l.mu.Lock()
	h := l.next
	l.next = 0
	l.mu.Unlock()
	if h == 0 {
		return nil, errListenerClosed
	}
	err := windows.ConnectNamedPipe(h, nil)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || (err != nil && err != windows.ERROR_PIPE_CONNECTED) {
		windows.CloseHandle(h)
		if l.closed {
			return nil, errListenerClosed
		}
		return nil, os.NewSyscallError("ConnectNamedPipe", err)
	}
	if next, err := l.instance(false); err == nil {
		l.next = next
	}
	return &pipeConn{File: os.NewFile(uintptr(h), "exec pipe"), h: h}, nil
}

// close stops accepting: it wakes a ConnectNamedPipe in progress by
// connecting to it.
func (l *pipeListener) close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	if h, err := windows.CreateFile(l.name, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, 0, 0); err == nil {
		windows.CloseHandle(h)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next != 0 {
		windows.CloseHandle(l.next)
		l.next = 0
	}
	return nil
}

// pipeConn is a client on the exec pipe.
type pipeConn struct {
	*os.File
	h      windows.Handle
	client windows.Handle // the client's process, to duplicate its stdio from
}

// begin admits a client of this user (or SYSTEM), by its process's token.
func (c *pipeConn) begin() error {
	var pid uint32
	if err := windows.GetNamedPipeClientProcessId(c.h, &pid); err != nil {
		return os.NewSyscallError("GetNamedPipeClientProcessId", err)
	}
	ph, err := windows.OpenProcess(windows.PROCESS_DUP_HANDLE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return fmt.Errorf("session: exec client pid %d: %w", pid, os.NewSyscallError("OpenProcess", err))
	}
	c.client = ph
	var tok windows.Token
	if err := windows.OpenProcessToken(ph, windows.TOKEN_QUERY, &tok); err != nil {
		return fmt.Errorf("session: exec client pid %d: %w", pid, os.NewSyscallError("OpenProcessToken", err))
	}
	defer tok.Close()
	them, err := tok.GetTokenUser()
	if err != nil {
		return err
	}
	me, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return err
	}
	if !them.User.Sid.Equals(me.User.Sid) && !them.User.Sid.IsWellKnown(windows.WinLocalSystemSid) {
		return fmt.Errorf("session: %s may not exec in a session of %s", them.User.Sid, me.User.Sid)
	}
	return nil
}

// deadline does nothing: a synchronous pipe has no read deadline (the
// DACL admits only the user's own clients).
func (c *pipeConn) deadline(time.Time) {}

// stdio duplicates the client's three standard handles named in req.
func (c *pipeConn) stdio(req *sessionctl.ExecRequest) ([]*os.File, error) {
	if len(req.Stdio) != 3 {
		return nil, fmt.Errorf("session: exec request without its 3 stdio handles (%d)", len(req.Stdio))
	}
	self := windows.CurrentProcess()
	var files []*os.File
	for i, v := range req.Stdio {
		var d windows.Handle
		if err := windows.DuplicateHandle(c.client, windows.Handle(v), self, &d, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("session: exec client's stdio handle %d: %w", i, os.NewSyscallError("DuplicateHandle", err))
		}
		files = append(files, os.NewFile(uintptr(d), fmt.Sprintf("stdio%d", i)))
	}
	return files, nil
}

// Close closes the connection and the client's process handle.
func (c *pipeConn) Close() error {
	if c.client != 0 {
		windows.CloseHandle(c.client)
	}
	return c.File.Close()
}
