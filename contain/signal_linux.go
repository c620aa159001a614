package contain

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/tether-run/tether/internal/identity"
)

// Signal sends sig to the main process through its pidfd, so never to a
// process that took its pid after it was reaped. Once the main process
// has exited it returns os.ErrProcessDone. To stop the run, use Stop:
// signalling the main process alone leaves what it started.
func (c *Cmd) Signal(sig os.Signal) error {
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("contain: Signal: %v is not a syscall.Signal", sig)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.sys.main == nil {
		return ErrNotStarted
	}
	if !c.rec.EndedAt.IsZero() {
		return os.ErrProcessDone
	}
	if err := c.sys.main.Signal(s); err != nil {
		if errors.Is(err, identity.ErrGone) {
			return os.ErrProcessDone
		}
		return err
	}
	return nil
}
