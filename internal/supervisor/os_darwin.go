package supervisor

import "github.com/tether-run/tether/internal/sessionctl"

// fdDir lists this process's open descriptors.
const fdDir = "/dev/fd"

// enterScope does nothing on macOS.
func enterScope(*sessionctl.Spec, string) error { return nil }

// bindings are the caveats of a supervisor's session on macOS, worded
// to follow "session NAME" (tether start prints them as notes).
func bindings() []string {
	return []string{"is a process group found in the process table (macOS has no kernel container; see its receipt's caveats): what a member double-forks into a session of its own before the walk its fork triggers can escape it"}
}
