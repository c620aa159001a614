//go:build linux || windows || darwin

package identity

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// Open opens a handle on t.PID and proves it is the process t names: the
// boot id must be this boot's, and the start time read after the handle
// was opened must equal the token's while the handle's process is still
// alive (on Linux, a pidfs inode equal to the token's proves it at once).
func Open(t Token) (*Handle, error) {
	boot, err := BootID()
	if err != nil {
		return nil, err
	}
	if t.BootID != boot {
		return nil, fmt.Errorf("%w: %s is from another boot", ErrMismatch, t)
	}
	if h, ok, err := openByIno(t); ok {
		return h, err
	}
	h, err := OpenPID(t.PID)
	if err != nil {
		return nil, err
	}
	if !t.Matches(h.Token) {
		h.Close()
		return nil, fmt.Errorf("%w: pid %d is now %s, want %s", ErrMismatch, t.PID, h.Token, t)
	}
	return h, nil
}

// Check reports whether the process a token string names is alive: nil
// if it is, an error wrapping ErrGone or ErrMismatch if it is provably
// not, ErrBadToken for a malformed token, another error if it cannot tell.
func Check(token string) error {
	t, err := Parse(token)
	if err != nil {
		return err
	}
	h, err := Open(t)
	if err != nil {
		return err
	}
	return h.Close()
}

// End makes sure the process token names has ended: nil once it is gone
// (or its pid is another process's now), after killing it through a
// handle proven to be it if it was still there and waiting up to wait for
// it to exit.
func End(token string, wait time.Duration) error {
	t, err := Parse(token)
	if err != nil {
		return err
	}
	h, err := Open(t)
	if errors.Is(err, ErrGone) || errors.Is(err, ErrMismatch) {
		return nil
	}
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, ErrGone) {
		return err
	}
	if !h.WaitExit(wait) {
		return fmt.Errorf("identity: %s did not exit %s after SIGKILL", token, wait)
	}
	return nil
}
