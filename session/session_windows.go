package session

import (
	"errors"
	"fmt"
	"os"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Exec is not implemented on Windows yet: it passes the caller's stdio to
// the supervisor over a Unix socket, which Wine lacks (issue 14).
func execIn(reg *registry.Registry, name string, argv, env []string, dir string, stdio [3]*os.File, sigs <-chan os.Signal) (receipt.Exit, error) {
	return receipt.Exit{Code: 125, MainStatus: -1}, fmt.Errorf("session: exec: %w on Windows yet", errors.ErrUnsupported)
}

// execServer is not implemented on Windows yet: serveExec serves nothing,
// and execIn says so.
type execServer struct{}

func serveExec(c *contain.Cmd, rt string) (*execServer, error) { return nil, nil }

func (s *execServer) close() {}
