package atomicfile

import (
	"errors"
	"fmt"
	"os"
)

// ErrReplaced is returned by Commit when the reserved name no longer holds
// the placeholder and is taken by a file that is not ours: nothing was
// replaced, and the data was kept in a file beside it, which the error
// names.
var ErrReplaced = errors.New("atomicfile: reserved file was replaced")

// Reservation is a file name claimed before its content exists: for a
// result that must not overwrite what is there, and whose failure to be
// written must be known before the work that produces it begins.
type Reservation struct {
	path string
	perm os.FileMode
	// f keeps the placeholder open: while it is, its inode cannot be
	// freed and reused, so a file that has the same identity is ours.
	f *os.File
}

// Reserve creates filename as an empty placeholder, exclusively
// (O_CREAT|O_EXCL): an existing file is refused, and so is a symlink,
// dangling or not, which is never followed. The error then satisfies
// errors.Is(err, fs.ErrExist).
//
// The placeholder, and the content Commit puts in its place, get perm as
// open(2) gives it to a new file: less the umask, or as the directory's
// default ACL says. A reserved name is one a user chose, and the file
// comes out as any file their commands create (see WriteFileUmask).
//
// A placeholder that stays empty means its writer died before Commit.
func Reserve(filename string, perm os.FileMode) (*Reservation, error) {
	f, err := os.OpenFile(filename, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	return &Reservation{path: filename, perm: perm, f: f}, nil
}

// Name returns the reserved file name.
func (r *Reservation) Name() string { return r.path }

// Commit replaces the placeholder with data as WriteFileUmask does (temporary
// file, sync, rename, sync of the directory), so that a reader sees the
// placeholder or the whole content. The rename happens only while the name
// still holds our placeholder; if it was removed meanwhile, the data is
// linked in only where the name is free. A name taken by someone else's
// file is left alone: the error wraps ErrReplaced and names the file that
// holds the data.
//
// The check and the rename are two steps: whoever can write the directory
// can swap the placeholder between them. That is no accident, and the
// rename would then replace only a file created in that instant.
func (r *Reservation) Commit(data []byte) error {
	if r.f == nil {
		return fmt.Errorf("atomicfile: %s: reservation already ended", r.path)
	}
	defer r.close()
	return inDir(r.path, true, func(d dir, name string) error {
		tmp, err := d.temp(name, data, r.perm, true, true)
		if err != nil {
			return err
		}
		if r.ours() {
			if closeBeforeRename {
				r.f.Close()
			}
			err = d.rename(tmp, name)
		} else if err = d.link(tmp, name); err == nil {
			d.remove(tmp)
		}
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: %s is no longer the placeholder created for it; the content is in %s", ErrReplaced, r.path, d.join(tmp))
		}
		if err != nil {
			d.remove(tmp)
			return err
		}
		return d.syncDir()
	})
}

// Cancel removes the placeholder if the name still holds it: the result
// will not be written. A file someone else put there is left alone.
func (r *Reservation) Cancel() error {
	if r.f == nil {
		return nil
	}
	defer r.close()
	if !r.ours() {
		return nil
	}
	return os.Remove(r.path)
}

// ours reports whether the name still holds our placeholder, unwritten.
func (r *Reservation) ours() bool {
	held, err := r.f.Stat()
	if err != nil {
		return false
	}
	st, err := os.Lstat(r.path)
	return err == nil && os.SameFile(st, held) && st.Size() == 0
}

func (r *Reservation) close() {
	r.f.Close()
	r.f = nil
}
