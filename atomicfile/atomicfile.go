// Package atomicfile writes files so that readers see the old content or
// the new content, never a torn mix, even across a crash.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tether-run/tether/internal/crash"
)

// WriteFile writes data to a temporary file in the same directory as
// filename, syncs it, sets perm, renames it over filename, and syncs the
// directory so the rename itself survives a crash of the machine.
func WriteFile(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, true)
}

// Replace is WriteFile without the syncs: atomic against the writer's own
// death (readers see the old or the new file, never a torn one), not
// durable across a machine crash. For state that a machine crash makes
// moot anyway, such as records of this boot's processes.
func Replace(filename string, data []byte, perm os.FileMode) error {
	return write(filename, data, perm, false)
}

func write(filename string, data []byte, perm os.FileMode, durable bool) error {
	tmp, err := temp(filename, data, perm, durable)
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
// its name.
func temp(filename string, data []byte, perm os.FileMode, durable bool) (name string, err error) {
	f, err := os.CreateTemp(filepath.Dir(filename), "."+filepath.Base(filename)+".tmp*")
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
	if err = f.Chmod(perm); err != nil {
		return "", err
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
