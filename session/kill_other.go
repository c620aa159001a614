//go:build windows || darwin

package session

import (
	"errors"
	"syscall"

	"github.com/tether-run/tether/registry"
)

// signalMembers is not supported here: the members are known to the
// supervisor's walks (macOS) or its job (Windows) only.
func signalMembers(rec *registry.Record, sig syscall.Signal) (int, error) {
	return 0, registry.Errorf(rec.Name, errors.ErrUnsupported, "signalling every member is Linux-only for now: tether kill without --all signals the main process")
}
