//go:build !unix

package atomicfile

import (
	"os"
	"path/filepath"
)

// dir is a directory that writes are made in; here, its path (Windows
// has no openat: the writes are by path).
type dir struct {
	path string
}

// openDir returns the directory p. A symlink at p is followed whatever
// follow says.
func openDir(p string, follow bool) (dir, error) { return dir{path: p}, nil }

func (d dir) close() {}

// join returns the path of name in d.
func (d dir) join(name string) string { return filepath.Join(d.path, name) }

// newFile creates the file name in d exclusively, with mode as the
// system applies it.
func (d dir) newFile(name string, mode os.FileMode) (*os.File, error) {
	return os.OpenFile(d.join(name), os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
}

func (d dir) rename(old, new string) error { return os.Rename(d.join(old), d.join(new)) }

func (d dir) link(old, new string) error { return os.Link(d.join(old), d.join(new)) }

// remove removes the file name, if it is there: the best a failed write
// can do to clean up.
func (d dir) remove(name string) { os.Remove(d.join(name)) }

func (d dir) sync() error {
	f, err := os.Open(d.path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
