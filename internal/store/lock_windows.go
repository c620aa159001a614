package store

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// lockName is the registry's lock file, beside records/.
const lockName = "lock"

// Lock takes the registry's exclusive lock (LockFileEx on <dir>\lock) and
// returns the func that releases it; see the Unix version for what it
// serializes. Windows releases the lock if the holder dies. The lock file
// is checked as every file of the state (ReadFile's rules).
func (r *Registry) Lock() (unlock func(), err error) {
	p := filepath.Join(r.Dir, lockName)
	f, _, err := r.openChecked(p, windows.GENERIC_READ|windows.GENERIC_WRITE, windows.OPEN_ALWAYS)
	if err != nil {
		return nil, err
	}
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped)); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "LockFileEx", Path: p, Err: err}
	}
	// Closing the handle releases the lock.
	return func() { f.Close() }, nil
}
