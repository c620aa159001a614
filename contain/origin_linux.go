package contain

import (
	"sync"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/internal/version"
	"github.com/tether-run/tether/receipt"
	"golang.org/x/sys/unix"
)

// tetherBuild is the build that writes the receipt. It cannot change while
// the program runs, so it is read once.
var tetherBuild = sync.OnceValue(func() receipt.Tether {
	v := version.Get()
	return receipt.Tether{Version: v.Version, Revision: v.Revision, Modified: v.Modified}
})

// hostRecord is the machine and boot the run happens in. What cannot be
// read stays empty: a receipt is still worth writing without it, and
// identity tokens carry the boot id on their own.
func hostRecord() receipt.Host {
	var h receipt.Host
	h.BootID, _ = identity.BootID()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		h.Hostname = unix.ByteSliceToString(u.Nodename[:])
		h.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return h
}
