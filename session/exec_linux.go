package session

import (
	"net"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// forwarded is the signal tether exec sends its command for sig: sig.
func forwarded(sig syscall.Signal) syscall.Signal { return sig }

// unixClient is the client's end of the exec socket.
type unixClient struct{ *net.UnixConn }

// sendStdio passes stdio as SCM_RIGHTS on one byte, before the request.
func (c unixClient) sendStdio(stdio [3]*os.File, _ *sessionctl.ExecRequest) error {
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
	addr := &net.UnixAddr{Name: "/proc/self/fd/" + strconv.Itoa(fd) + "/" + sessionctl.ExecSocket, Net: "unix"}
	conn, err := net.DialUnix("unix", nil, addr)
	if err != nil {
		return nil, registry.Errorf(rec.Name, nil, "takes no exec requests (its supervisor predates tether exec, or is ending): %v", err)
	}
	return unixClient{conn}, nil
}
