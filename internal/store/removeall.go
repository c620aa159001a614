package store

import (
	"errors"
	"os"
	"path/filepath"
)

// RemoveAll removes the tree at p as os.RemoveAll does and, where that
// fails, entry by entry with os.Remove: Wine 8 lacks the file-disposition
// call Go's os.RemoveAll uses on Windows (../shared/WINDOWS.md), and the
// runtime dirs of sessions must still go. A missing p is not an error.
func RemoveAll(p string) error {
	err := os.RemoveAll(p)
	if err == nil {
		return nil
	}
	if err := removeEach(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// removeEach removes p, its entries first when it is a directory (never
// following a symlink).
func removeEach(p string) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if st.IsDir() && st.Mode()&os.ModeSymlink == 0 {
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := removeEach(filepath.Join(p, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return os.Remove(p)
}
