//go:build !linux

package randid

// kernel leaves the bytes to crypto/rand on this system.
func kernel(b []byte) bool { return false }
