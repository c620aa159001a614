//go:build !unix

package session

import (
	"errors"
	"os"
)

// openLogReader is not implemented on this system.
func openLogReader(path string) (*os.File, error) { return nil, errors.ErrUnsupported }
