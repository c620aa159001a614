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

// StartErrorCode maps a Start error to tether's exit code (125 here).
func StartErrorCode(err error) int {
	if err == nil {
		return 0
	}
	return 125
}

func (s *sysState) processState() *os.ProcessState { return nil }

// Signal is unsupported here: nothing can be started.
func (c *Cmd) Signal(sig os.Signal) error { return errors.ErrUnsupported }
