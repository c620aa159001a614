//go:build !unix

package cli

// checkFDLimit has nothing to check on this system.
func checkFDLimit() error { return nil }
