//go:build !linux && !windows && !darwin

package contain

import (
	"errors"
	"fmt"
	"os"
)

type sysState struct{}

func (c *Cmd) start() error {
	return fmt.Errorf("contain: %w on this system (Linux only for now)", errors.ErrUnsupported)
}

func (s *sysState) processState() *os.ProcessState { return nil }

// Signal is unsupported here: nothing can be started.
func (c *Cmd) Signal(sig os.Signal) error { return errors.ErrUnsupported }

// spawnErrorCode knows no spawn errors here.
func spawnErrorCode(*os.PathError) (int, bool) { return 0, false }

// failStart has nothing to undo here: nothing can be started.
func (c *Cmd) failStart(error) {}
