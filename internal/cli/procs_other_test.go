//go:build !linux

package cli_test

// killMarked does nothing where the process scan is not implemented; the
// tests that start long-lived processes are Linux-only.
func killMarked(string) {}
