// Package randid makes the random names tether gives runs, leaves,
// records and requests: n bytes from the kernel's CSPRNG, in hex.
package randid

import (
	"crypto/rand"
	"encoding/hex"
)

// Hex returns n random bytes as 2n lowercase hex digits. The bytes are
// the kernel's (getrandom(2) on Linux, crypto/rand elsewhere): the names
// are unguessable as well as unique.
func Hex(n int) string {
	b := make([]byte, n)
	if !kernel(b) {
		rand.Read(b) // never fails (Go 1.24+)
	}
	return hex.EncodeToString(b)
}
