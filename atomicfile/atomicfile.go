// Package atomicfile writes files so that readers see the old content or
// the new content, never a torn mix, even across a crash.
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
// directory so the rename itself survives a crash of the machine.
func WriteFile(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, true, false)
}

// WriteFileUmask is WriteFile with os.WriteFile's permissions: the file
// gets perm as open(2) gives it to a new file (less the umask, or as the
// directory's default ACL says), not perm exactly. It is for files a user
// names, which should come out as any file their commands create (issue
// 22: a receipt was 0644 under umask 077); tether's own files take
// WriteFile's exact mode.
func WriteFileUmask(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, true, true)
}

// Replace is WriteFile without the syncs: atomic against the writer's own
// death (readers see the old or the new file, never a torn one), not
// durable across a machine crash. For state that a machine crash makes
// moot anyway, such as records of this boot's processes.
func Replace(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, false, false)
}

func write(filename string, data []byte, perm os.FileMode, durable, umasked bool) error {
	tmp, err := temp(filename, data, perm, durable, umasked)
	if err != nil {
		return err
	}
	crash.Point("atomic-before-rename")
	if err := os.Rename(tmp, filename); err != nil {
		os.Remove(tmp)
		return err
	}
	if !durable {
		return nil
	}
	return syncDir(filepath.Dir(filename))
}

// temp writes data to a new temporary file beside filename and returns
// its name. Its mode is perm exactly, or, when umasked, perm as open(2)
// gives it to a new file.
func temp(filename string, data []byte, perm os.FileMode, durable, umasked bool) (name string, err error) {
	var f *os.File
	if umasked {
		f, err = createTemp(filename, perm)
	} else {
		f, err = os.CreateTemp(filepath.Dir(filename), "."+filepath.Base(filename)+".tmp*")
	}
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return "", err
	}
	if !umasked {
		if err = f.Chmod(perm); err != nil {
			return "", err
		}
	}
	if durable {
		if err = f.Sync(); err != nil {
			return "", err
		}
	}
	if err = f.Close(); err != nil {
		return "", err
	}
	return tmp, nil
}

// createTemp creates a new file beside filename, named as temp's others
// are, with perm as open(2) applies it: the kernel takes the umask (or a
// default ACL) into account, which no process can read without changing
// it (umask(2) sets as it reads, for every thread). os.CreateTemp's mode
// is 0600 whatever perm.
func createTemp(filename string, perm os.FileMode) (*os.File, error) {
	prefix := filepath.Join(filepath.Dir(filename), "."+filepath.Base(filename)+".tmp")
	for try := 0; ; try++ {
		f, err := os.OpenFile(prefix+randid.Hex(6), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue // a name taken, by chance or by a planted link
		}
		return f, err
	}
}

// syncDir makes a rename or link in dir survive a crash of the machine.
func syncDir(dir string) error {
	if !dirSync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: sync dir: %w", err)
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("atomicfile: sync dir: %w", err)
	}
	return nil
}
