//go:build !linux

package watch

import "errors"

// Add reports that no watcher exists on this system: Windows kills a
// job's members when its last handle closes (KILL_ON_JOB_CLOSE), and
// macOS has no kernel group to hold.
func Add(dir string, g Group) (uint64, error) { return 0, errors.ErrUnsupported }

// Done does nothing on this system.
func Done(id uint64) {}

// Serve does nothing on this system.
func Serve() {}
