//go:build !linux && !windows && !darwin

package identity

import (
	"errors"
	"syscall"
	"time"
)

// BootID is not implemented on this system.
func BootID() (string, error) { return "", errors.ErrUnsupported }

// ReadStat is not implemented on this system.
func ReadStat(pid int) (Stat, error) { return Stat{}, errors.ErrUnsupported }

// Of is not implemented on this system.
func Of(pid int) (Token, error) { return Token{}, errors.ErrUnsupported }

// StartedAt is not implemented on this system.
func StartedAt(t Token) time.Time { return time.Time{} }

// Cmdline is not implemented on this system.
func Cmdline(pid int) []string { return nil }

// Handle is a verified process handle; not implemented on this system.
type Handle struct{ Token Token }

// Open is not implemented on this system.
func Open(t Token) (*Handle, error) { return nil, errors.ErrUnsupported }

// OpenPID is not implemented on this system.
func OpenPID(pid int) (*Handle, error) { return nil, errors.ErrUnsupported }

// FD is not implemented on this system.
func (h *Handle) FD() int { return -1 }

// Signal is not implemented on this system.
func (h *Handle) Signal(sig syscall.Signal) error { return errors.ErrUnsupported }

// CgroupID is not implemented on this system.
func (h *Handle) CgroupID() (uint64, error) { return 0, errors.ErrUnsupported }

// Exited is not implemented on this system.
func (h *Handle) Exited() bool { return false }

// WaitExit is not implemented on this system.
func (h *Handle) WaitExit(d time.Duration) bool { return false }

// Close is not implemented on this system.
func (h *Handle) Close() error { return nil }

// OpenChild is not implemented on this system.
func OpenChild(pid int) (*Handle, error) { return nil, errors.ErrUnsupported }

// Identify is not implemented on this system.
func (h *Handle) Identify() error { return errors.ErrUnsupported }

// Reap is not implemented on this system.
func (h *Handle) Reap() error { return errors.ErrUnsupported }

// Check is not implemented on this system.
func Check(token string) error { return errors.ErrUnsupported }
