// Package atomicfile writes files so that readers see the old content or
// the new content, never a torn mix, even across a crash.
//
// Every write is made relative to its directory, held open: on Unix the
// path forms open it and call the same code as ReplaceAt and CreateAt,
// which take a directory the caller holds (a directory renamed, and a
// symlink put in its place, while a write is under way redirects
// nothing of it); on Windows the directory is its path.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tether-run/tether/internal/crash"
	"github.com/tether-run/tether/internal/randid"
)

// WriteFile writes data to a temporary file in the same directory as
// filename, syncs it, sets perm, renames it over filename, and syncs the
// directory so the rename itself survives a crash of the machine. It is
// for tether's own files: on Unix it never writes through a symlink in
// place of filename's directory (as Replace).
func WriteFile(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, true, false)
}

// WriteFileUmask is WriteFile with os.WriteFile's permissions: the file
// gets perm as open(2) gives it to a new file (less the umask, or as the
// directory's default ACL says), not perm exactly. It is for files a user
// names, which should come out as any file their commands create (issue
// 22: a receipt was 0644 under umask 077); tether's own files take
// WriteFile's exact mode. A symlink naming filename's directory is
// followed, as open(2) follows it: the user chose the path.
func WriteFileUmask(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, true, true)
}

// Replace is WriteFile without the syncs: atomic against the writer's own
// death (readers see the old or the new file, never a torn one), not
// durable across a machine crash. For state that a machine crash makes
// moot anyway, such as records of this boot's processes. On Unix a
// symlink in place of filename's directory is refused (ENOTDIR or ELOOP), never
// followed: a directory of tether's state that is a symlink was swapped
// (issue 22).
func Replace(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, false, false)
}

// write is the path forms of replace: filename's directory is opened
// (following a symlink only for a file a user names, umasked) and the
// write made relative to it.
func write(filename string, data []byte, perm os.FileMode, durable, umasked bool) error {
	return inDir(filename, umasked, func(d dir, name string) error {
		return d.replace(name, data, perm, durable, umasked)
	})
}

// inDir runs fn with filename's directory, open, and its base name.
func inDir(filename string, follow bool, fn func(d dir, name string) error) error {
	d, err := openDir(filepath.Dir(filename), follow)
	if err != nil {
		return err
	}
	defer d.close()
	return fn(d, filepath.Base(filename))
}

// replace writes data to a temporary file beside name in d and renames
// it over name: a symlink or anything else at name is replaced, never
// written through. With durable, the file and then d are synced.
func (d dir) replace(name string, data []byte, perm os.FileMode, durable, umasked bool) error {
	tmp, err := d.temp(name, data, perm, durable, umasked)
	if err != nil {
		return err
	}
	crash.Point("atomic-before-rename")
	if err := d.rename(tmp, name); err != nil {
		d.remove(tmp)
		return err
	}
	if !durable {
		return nil
	}
	return d.syncDir()
}

// temp writes data to a new file beside name in d and returns its name,
// .NAME.tmpXXXXXXXXXXXX (reap sweeps those an interrupted write left).
// Its mode is perm exactly, or, when umasked, perm as open(2) gives it to
// a new file: the kernel takes the umask (or a default ACL) into account,
// which no process can read without changing it (umask(2) sets as it
// reads, for every thread).
func (d dir) temp(name string, data []byte, perm os.FileMode, durable, umasked bool) (tmp string, err error) {
	mode := os.FileMode(0o600)
	if umasked {
		mode = perm
	}
	var f *os.File
	for try := 0; ; try++ {
		tmp = "." + name + ".tmp" + randid.Hex(6)
		f, err = d.newFile(tmp, mode)
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			break // else a name taken, by chance or by a planted link
		}
	}
	if err != nil {
		return "", err
	}
	err = fill(f, data, perm, !umasked, durable)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		d.remove(tmp)
		return "", err
	}
	return tmp, nil
}

// fill writes data to the new file f, gives it mode perm exactly if
// chmod (the mode given to open was reduced by the umask), and syncs it
// if durable.
func fill(f *os.File, data []byte, perm os.FileMode, chmod, durable bool) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if chmod {
		if err := f.Chmod(perm); err != nil {
			return err
		}
	}
	if durable {
		return f.Sync()
	}
	return nil
}

// syncDir makes a rename or link in d survive a crash of the machine.
func (d dir) syncDir() error {
	if !dirSync {
		return nil
	}
	if err := d.sync(); err != nil {
		return fmt.Errorf("atomicfile: sync dir: %w", err)
	}
	return nil
}
