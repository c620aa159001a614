//go:build !linux

package cgroup

import (
	"errors"
	"time"
)

// Leaf is a cgroup v2 leaf; cgroups exist only on Linux.
type Leaf struct {
	Path   string
	Parent string
	ID     uint64
}

// Mount reports that there is no cgroup v2 hierarchy on this system.
func Mount() (string, error) { return "", ErrNoV2 }

// Self is not implemented on this system.
func Self(pid int) (string, error) { return "", ErrNoV2 }

// DefaultParent is not implemented on this system.
func DefaultParent() (string, error) { return "", ErrNoV2 }

// CheckParent is not implemented on this system.
func CheckParent(dir string) error { return ErrNoV2 }

// Writable reports false: there are no cgroups on this system.
func Writable(dir string) bool { return false }

// Create is not implemented on this system.
func Create(parent string) (*Leaf, error) { return nil, ErrNoV2 }

// Name returns the leaf's directory name.
func (l *Leaf) Name() string { return "" }

// StartFD is not implemented on this system.
func (l *Leaf) StartFD() (int, func(), error) { return -1, func() {}, errors.ErrUnsupported }

// Procs is not implemented on this system.
func (l *Leaf) Procs() ([]int, error) { return nil, errors.ErrUnsupported }

// Events is not implemented on this system.
func (l *Leaf) Events() (Events, error) { return Events{}, errors.ErrUnsupported }

// CPU is not implemented on this system.
func (l *Leaf) CPU() (CPUStat, error) { return CPUStat{}, errors.ErrUnsupported }

// Kill is not implemented on this system.
func (l *Leaf) Kill() error { return errors.ErrUnsupported }

// Seal does nothing: there are no leaves on this system.
func (l *Leaf) Seal() {}

// Killed reports false on this system.
func (l *Leaf) Killed() bool { return false }

// WaitEmpty is not implemented on this system.
func (l *Leaf) WaitEmpty(d time.Duration) (bool, error) { return false, errors.ErrUnsupported }

// Remove is not implemented on this system.
func (l *Leaf) Remove() error { return errors.ErrUnsupported }

// Close is not implemented on this system.
func (l *Leaf) Close() error { return nil }

// V1Mounts reports no v1 controllers on this system.
func V1Mounts() map[string]string { return map[string]string{} }

// SelfV1 is not implemented on this system.
func SelfV1(pid int) (map[string]string, error) { return nil, ErrNoV2 }

// OpenLeaf is not implemented on this system.
func OpenLeaf(path string, id uint64) (*Leaf, error) { return nil, ErrNoV2 }

// HasKill reports false: cgroups are Linux only.
func (l *Leaf) HasKill() bool { return false }

// Freeze returns errors.ErrUnsupported: cgroups are Linux only.
func (l *Leaf) Freeze(on bool) error { return errors.ErrUnsupported }

// FreezeRequested returns errors.ErrUnsupported: cgroups are Linux only.
func (l *Leaf) FreezeRequested() (bool, error) { return false, errors.ErrUnsupported }

// WaitFrozen returns errors.ErrUnsupported: cgroups are Linux only.
func (l *Leaf) WaitFrozen(d time.Duration) (bool, error) { return false, errors.ErrUnsupported }
