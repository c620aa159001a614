//go:build !unix && !windows

package store

import (
	"errors"

	"github.com/tether-run/tether/registry"
)

// Registry is one user's state directory; not implemented on this system.
type Registry struct{ Dir string }

// DefaultDir is not implemented on this system.
func DefaultDir(getenv func(string) string) (string, error) { return "", errors.ErrUnsupported }

// Open is not implemented on this system.
func Open(dir string) (*Registry, error) { return nil, errors.ErrUnsupported }

// Close is not implemented on this system.
func (r *Registry) Close() error { return errors.ErrUnsupported }

// LogPath is not implemented on this system.
func (r *Registry) LogPath(name, runID string) string { return "" }

// ReceiptPath is not implemented on this system.
func (r *Registry) ReceiptPath(name, runID string) string { return "" }

// WriteReceipt is not implemented on this system.
func (r *Registry) WriteReceipt(name, runID string, b []byte) (string, error) {
	return "", errors.ErrUnsupported
}

// RuntimeDir is not implemented on this system.
func (r *Registry) RuntimeDir(name string) string { return "" }

// CheckDir is not implemented on this system.
func (r *Registry) CheckDir(d string) error { return errors.ErrUnsupported }

// Claim is not implemented on this system.
func (r *Registry) Claim(name string) (string, error) { return "", errors.ErrUnsupported }

// Release is not implemented on this system.
func (r *Registry) Release(name string) error { return errors.ErrUnsupported }

// Write is not implemented on this system.
func (r *Registry) Write(rec *registry.Record) error { return errors.ErrUnsupported }

// Read is not implemented on this system.
func (r *Registry) Read(name string) (*registry.Record, error) { return nil, errors.ErrUnsupported }

// Current is not implemented on this system.
func (r *Registry) Current(rec *registry.Record) bool { return false }

// List is not implemented on this system.
func (r *Registry) List() ([]*registry.Record, []error) { return nil, []error{errors.ErrUnsupported} }

// Delete is not implemented on this system.
func (r *Registry) Delete(name string) error { return errors.ErrUnsupported }

// ListLive is not implemented on this system.
func (r *Registry) ListLive() ([]*registry.Record, []error) {
	return nil, []error{errors.ErrUnsupported}
}

// Names is not implemented on this system.
func (r *Registry) Names(dir string) ([]string, error) { return nil, errors.ErrUnsupported }

// Lock is not implemented on this system.
func (r *Registry) Lock() (func(), error) { return nil, errors.ErrUnsupported }
