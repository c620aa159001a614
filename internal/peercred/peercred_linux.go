// Package peercred reads who is at the other end of a Unix socket.
package peercred

import (
	"net"

	"golang.org/x/sys/unix"
)

// UID returns the uid of the process at the other end of c, as the
// kernel recorded it at connect (SO_PEERCRED).
func UID(c *net.UnixConn) (uint32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return cred.Uid, nil
}
