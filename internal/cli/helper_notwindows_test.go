//go:build !windows

package cli_test

// runOSHelper runs the helpers of this system's own tests: none here.
func runOSHelper(name string, args []string) (int, bool) { return 0, false }
