package contain

import (
	"context"
	"os"

	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/store"
)

// EnterScope moves this whole process into a transient systemd scope of
// its own with Delegate=yes (systemd's system manager for root, the
// user's own manager otherwise), so that the runs it starts get cgroup
// leaves on a systemd host whose cgroup for the program is not delegated:
// without it, Start falls back and the receipt's fallback_reason says
// why. It returns the scope's unit name. Call it first thing, before
// starting anything that should stay in the old cgroup. The scope ends
// with its last process. Without a reachable manager it returns an
// error saying so; elsewhere than Linux, one wrapping
// errors.ErrUnsupported.
func EnterScope(ctx context.Context) (unit string, err error) {
	s, err := delegate.EnterScope(ctx, delegate.Options{Description: "tether: a program's runs"})
	if err != nil || s == nil {
		return "", err
	}
	return s.Unit, nil
}

// DefaultStateDir is the state directory the tether command uses, for
// Cmd.StateDir and session.Open: $XDG_RUNTIME_DIR/tether when set,
// /run/tether for root, else $XDG_STATE_HOME/tether (by default
// ~/.local/state/tether); on Windows %TETHER_STATE_DIR%, else
// %LOCALAPPDATA%\tether. A variable set to something unusable (relative,
// or under a directory another user can write) is refused with an error
// naming it.
func DefaultStateDir() (string, error) { return store.DefaultDir(os.Getenv) }
