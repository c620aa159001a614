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
	var uid uint32
	var cerr error
	if err := raw.Control(func(fd uintptr) { uid, cerr = FD(int(fd)) }); err != nil {
		return 0, err
	}
	return uid, cerr
}

// FD is UID for a socket held as a bare descriptor.
func FD(fd int) (uint32, error) {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, err
	}
	return cred.Uid, nil
}
