//go:build !linux && !windows

package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
)

// Member is a process Join started in a running group.
type Member struct {
	token identity.Token // the member's identity (boot id, pid, start time)
}

// Join starts ec as one more member of the running group: Linux only for
// now (sessions, which use it, are Linux-only).
func (c *Cmd) Join(ec *exec.Cmd) (*Member, error) {
	return nil, fmt.Errorf("contain: Join: %w on this system yet", errors.ErrUnsupported)
}

// Wait waits for the member to exit.
func (m *Member) Wait() receipt.Exit { return receipt.Exit{Code: 125, MainStatus: -1} }

// Signal sends sig to the member.
func (m *Member) Signal(sig os.Signal) error { return errors.ErrUnsupported }
