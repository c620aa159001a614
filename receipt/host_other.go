//go:build !linux && !windows

package receipt

import "os"

// currentHost is the machine this process runs in; boot id and kernel
// release are read on Linux only.
func currentHost() Host {
	h, _ := os.Hostname()
	return Host{Hostname: h}
}
