package receipt

import (
	"fmt"
	"os"

	"github.com/tether-run/tether/internal/identity"
	"golang.org/x/sys/windows"
)

// currentHost is the machine and boot this process runs in: the host
// name, the boot id identity's tokens carry, and the Windows version
// (major.minor.build) as the kernel.
func currentHost() Host {
	var h Host
	h.Hostname, _ = os.Hostname()
	h.BootID, _ = identity.BootID()
	maj, min, build := windows.RtlGetNtVersionNumbers()
	h.Kernel = fmt.Sprintf("%d.%d.%d", maj, min, build&0xffff)
	return h
}
