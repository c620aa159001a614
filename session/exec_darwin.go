package session

import (
	"errors"
	"fmt"
	"os"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
)

// execIn is not implemented on macOS yet: a process joined to a session
// would be proven a member only by the supervisor's walks (issue 14).
func execIn(reg *store.Registry, name string, o ExecOptions, stdio [3]*os.File, sigs <-chan os.Signal) (receipt.Exit, error) {
	return receipt.Exit{Code: 125, MainStatus: -1}, fmt.Errorf("session: exec: %w on macOS yet", errors.ErrUnsupported)
}
