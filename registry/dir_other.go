//go:build !linux

package registry

import "errors"

// Registry is one user's state directory; Linux only for now.
type Registry struct{ Dir string }

// DefaultDir is not implemented on this system.
func DefaultDir(getenv func(string) string) (string, error) { return "", errors.ErrUnsupported }

// Open is not implemented on this system.
func Open(dir string) (*Registry, error) { return nil, errors.ErrUnsupported }
