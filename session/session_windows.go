package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Logs is not implemented on Windows yet: following a log needs a file
// watch of its own there (issue 14). The log itself is written.
func logs(ctx context.Context, reg *registry.Registry, name string, w io.Writer, o LogOptions) error {
	return fmt.Errorf("session: logs: %w on Windows yet (the log is %s)", errors.ErrUnsupported, reg.LogPath(name))
}

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
