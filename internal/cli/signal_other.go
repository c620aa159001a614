//go:build !unix && !windows

package cli

import (
	"errors"
	"syscall"
)

// parseSignal: tether runs commands on Linux only.
func parseSignal(s string) (syscall.Signal, error) { return 0, errors.ErrUnsupported }
