package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tether-run/tether/internal/atomicfile"
)

// The registry's writes on Windows, by path: the state directory's
// protected DACL keeps others out of it (see checkSecurity).

// open creates what is missing of the state directory and its
// subdirectories, and checks them.
func (r *Registry) open() error {
	for _, d := range append([]string{r.Dir}, subdirs...) {
		if d != r.Dir {
			d = filepath.Join(r.Dir, d)
		}
		if err := r.ensureDirPath(d); err != nil {
			return err
		}
	}
	return nil
}

// Close does nothing on Windows: the registry holds nothing open.
func (r *Registry) Close() error { return nil }

func (r *Registry) ensureDir(d string) error { return r.ensureDirPath(d) }

func (r *Registry) claim(name string) error {
	d := r.RuntimeDir(name)
	if err := r.mkdirPrivate(d); err != nil {
		if cerr := r.checkDir(d); errors.Is(err, os.ErrExist) && cerr != nil {
			return cerr // a symlink or another user's directory in its place
		}
		return err
	}
	for _, sub := range []string{"tmp", "sock"} {
		if err := r.mkdirPrivate(filepath.Join(d, sub)); err != nil {
			RemoveAll(d)
			return err
		}
	}
	return nil
}

func (r *Registry) release(name string) error {
	d := r.RuntimeDir(name)
	if err := r.checkDir(d); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return RemoveAll(d)
}

func (r *Registry) replace(sub, file string, b []byte) error {
	return atomicfile.Replace(filepath.Join(r.Dir, sub, file), b, 0o600)
}

func (r *Registry) create(sub, file string, b []byte) error {
	return atomicfile.Create(filepath.Join(r.Dir, sub, file), b, 0o600)
}

// remove removes the file if it exists. Unlike os.Remove it never tries
// rmdir: a directory in a record's place is reported, not removed.
func (r *Registry) remove(sub, file string) error {
	p := filepath.Join(r.Dir, sub, file)
	if err := syscall.Unlink(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return nil
}

func (r *Registry) readIn(sub, file string, max int64) ([]byte, error) {
	return r.ReadFile(filepath.Join(r.Dir, sub, file), max)
}

func (r *Registry) readDirNames(sub string) ([]string, error) {
	f, err := os.Open(filepath.Join(r.Dir, sub))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// rename renames from to to in the directory sub (replacing to).
func (r *Registry) rename(sub, from, to string) error {
	return os.Rename(filepath.Join(r.Dir, sub, from), filepath.Join(r.Dir, sub, to))
}
