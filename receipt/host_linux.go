package receipt

import (
	"github.com/tether-run/tether/internal/identity"
	"golang.org/x/sys/unix"
)

// currentHost is the machine and boot this process runs in. What cannot be
// read stays empty: a receipt is still worth writing without it, and the
// identity tokens carry the boot id on their own.
func currentHost() Host {
	var h Host
	h.BootID, _ = identity.BootID()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Hostname = unix.ByteSliceToString(u.Nodename[:])
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return h
}
