//go:build !linux

package delegate

import (
	"context"
	"errors"
)

// Booted reports false: systemd runs only on Linux.
func Booted() bool { return false }

// Check is not implemented on this system.
func Check(ctx context.Context, dir string) (Proof, error) { return "", errors.ErrUnsupported }

// EnterScope is not implemented on this system.
func EnterScope(ctx context.Context, o Options) (*Scope, error) { return nil, errors.ErrUnsupported }

// Entered returns nil: no scope can be entered on this system.
func Entered() *Home { return nil }

// Parent is not implemented on this system.
func Parent(ctx context.Context) (Home, error) { return Home{}, errors.ErrUnsupported }

// Prepare is not implemented on this system.
func Prepare(ctx context.Context, o PrepareOptions) (Home, error) {
	return Home{}, errors.ErrUnsupported
}

// Reachable reports that no manager exists on this system.
func Reachable() (Manager, error) { return "", ErrNoManager }

// ScopeControllers returns none: no scopes on this system.
func ScopeControllers(m Manager) []string { return []string{} }
