package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/registry"
)

// Reclaim stops an unsupervised session through its leaf, acting only on
// what it can prove: the leaf directory is opened and its inode must equal
// the recorded cgroup id before cgroup.kill is written. A session without
// a leaf (fallback mechanism) is left to `tether reap`.
func Reclaim(reg *registry.Registry, rec *registry.Record) error {
	if h, err := Supervisor(rec); err == nil {
		h.Close()
		return fmt.Errorf("session: %q is supervised", rec.Name)
	}
	if rec.Cgroup != "" {
		if err := killLeaf(rec.Cgroup, rec.CgroupID); err != nil {
			return err
		}
	} else if rec.Main != "" {
		return fmt.Errorf("session: %q has no leaf to prove its members by; `tether reap` handles it", rec.Name)
	}
	rec.State, rec.StopReason, rec.UpdatedAt = registry.StateStopped, "reclaimed", time.Now().UTC()
	return errors.Join(reg.Write(rec), reg.Release(rec.Name))
}

// killLeaf empties and removes the leaf at path if it is still the one
// with id.
func killLeaf(path string, id uint64) error {
	fd, err := unix.Open(path, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil // already gone
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Ino != id {
		return fmt.Errorf("session: %s is not the recorded leaf (id %d, found %d): left alone", path, id, st.Ino)
	}
	kill, err := unix.Openat(fd, "cgroup.kill", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Join(path, "cgroup.kill"), Err: err}
	}
	_, err = unix.Write(kill, []byte("1"))
	unix.Close(kill)
	if err != nil {
		return err
	}
	for range 500 {
		if err := unix.Rmdir(path); err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("session: %s still populated after cgroup.kill", path)
}
