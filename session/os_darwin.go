package session

import "github.com/tether-run/tether/internal/store"

// What sessions do on macOS only: nothing moves the supervisor (there is
// no systemd), and no enclosing session is found (no cgroup to find it
// by). Built and vetted, not yet run on macOS.

// fdDir lists this process's open descriptors.
const fdDir = "/dev/fd"

// enterScope does nothing on macOS.
func enterScope(*supervisorSpec, string) error { return nil }

// enclosingSession finds nothing on macOS: membership of a session's
// process group is not proof enough to default an owner to it.
func enclosingSession(*store.Registry) (string, bool) { return "", false }

// bindings are the caveats of a supervisor's session on macOS, worded
// to follow "session NAME" (tether start prints them as notes).
func bindings() []string {
	return []string{"is a process group found in the process table (macOS has no kernel container; see its receipt's caveats): what a member double-forks into a session of its own before the walk its fork triggers can escape it"}
}
