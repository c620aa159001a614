package session

import "github.com/tether-run/tether/internal/store"

// What sessions do on macOS only: nothing moves the supervisor (there is
// no systemd), and no enclosing session is found (no cgroup to find it
// by). Built and vetted, not yet run on macOS.

// enclosingSession finds nothing on macOS: membership of a session's
// process group is not proof enough to default an owner to it.
func enclosingSession(*store.Registry) (string, bool) { return "", false }
