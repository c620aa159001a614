package cli

import (
	"errors"
	"fmt"
	"os"
)

// ptyRelay is tether exec -t's terminal, which Windows has not yet (a
// pseudo console, ConPTY).
type ptyRelay struct{ replica *os.File }

func openRelay(in, out *os.File) (*ptyRelay, error) {
	return nil, fmt.Errorf("a terminal for the command: %w on Windows yet", errors.ErrUnsupported)
}

func (r *ptyRelay) close() {}
