//go:build !linux

package cli

// isTerminal is false here: the progress reports are for tether's Linux
// stops (TETHER_PROGRESS=1 forces them).
func isTerminal(fd uintptr) bool { return false }
