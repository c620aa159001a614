//go:build linux || windows || darwin

package session

import (
	"syscall"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/registry"
)

// Kill sends sig to the named session's main process, or with all to
// every member of its group, without the stop protocol (as kill(1) or
// `docker kill -s` do): the session is not stopped by it, unless its
// processes end of it and its end policy then stops it as when they exit
// of themselves. Each process is proven before it is signalled: the main
// by its token, a member by its pidfd's cgroup being the session's leaf.
// It returns how many processes were signalled.
func (c *Client) Kill(name string, sig syscall.Signal, all bool) (int, error) {
	rec, err := c.reg.Read(name)
	if err != nil {
		return 0, err
	}
	if !rec.Live() {
		return 0, registry.Errorf(rec.Name, ErrEnded, "has ended (%s): nothing to signal", rec.State)
	}
	if all {
		return signalMembers(rec, sig)
	}
	tok, err := identity.Parse(rec.Main)
	if err != nil {
		return 0, registry.Errorf(rec.Name, ErrStarting, "no main process recorded yet")
	}
	h, err := identity.Open(tok)
	if err != nil {
		e := registry.Errorf(rec.Name, ErrEnded, "its main process has exited")
		e.Cause = err
		return 0, e
	}
	defer h.Close()
	if err := h.Signal(sig); err != nil {
		return 0, err
	}
	return 1, nil
}
