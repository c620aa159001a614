package atomicfile

import (
	"os"

	"github.com/tether-run/tether/internal/crash"
)

// Create writes a new file, filename, holding data with mode perm, without
// syncing (as Replace): readers see no file or the whole of it, never a
// part. It fails, with an error satisfying errors.Is(err, fs.ErrExist),
// when filename exists, and never follows a symlink there, nor on Unix
// one in place of filename's directory (as Replace).
//
// Where the system allows (Linux, on filesystems with O_TMPFILE) the data
// is written to an unnamed file that is linked into place once complete,
// so a writer that dies midway leaves nothing behind; elsewhere a named
// temporary file beside it is hard-linked to filename and removed.
func Create(filename string, data []byte, perm os.FileMode) error {
	return inDir(filename, false, func(d dir, name string) error {
		return d.create(name, data, perm)
	})
}

// create is Create of the file name in d.
func (d dir) create(name string, data []byte, perm os.FileMode) error {
	if done, err := unnamed(d, name, data, perm); done {
		return err
	}
	tmp, err := d.temp(name, data, perm, false, false)
	if err != nil {
		return err
	}
	crash.Point("atomic-before-rename")
	err = d.link(tmp, name)
	d.remove(tmp)
	return err
}

// unnamed is createUnnamed; tests replace it to take the portable way.
var unnamed = createUnnamed
