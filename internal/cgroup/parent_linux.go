package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tether-run/tether/internal/procfs"
	"golang.org/x/sys/unix"
)

// Mount returns the mount point of the cgroup v2 hierarchy, read once from
// /proc/self/mountinfo.
func Mount() (string, error) { return v2Mount() }

var v2Mount = sync.OnceValues(func() (string, error) {
	b, err := mountinfo()
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	m := ParseMountinfo(b)
	if m == "" {
		return "", ErrNoV2
	}
	return m, nil
})

// mountinfo is /proc/self/mountinfo, read once for v2Mount and
// v1Mounts alike (8 KiB at a time: a host with systemd has a few KiB).
var mountinfo = sync.OnceValues(func() ([]byte, error) {
	return procfs.ReadFileSized("/proc/self/mountinfo", 8<<10)
})

// Self returns the cgroup v2 path of pid (0 for the calling process)
// relative to the hierarchy's root, such as "/" or "/user.slice/x.scope".
func Self(pid int) (string, error) {
	p := "/proc/self/cgroup"
	if pid > 0 {
		p = fmt.Sprintf("/proc/%d/cgroup", pid)
	}
	b, err := procfs.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	return ParseProcCgroup(b)
}

// DefaultParent returns the directory of the calling process's own cgroup,
// where leaves go when no parent was given.
func DefaultParent() (string, error) {
	m, err := Mount()
	if err != nil {
		return "", err
	}
	self, err := Self(0)
	if err != nil {
		return "", err
	}
	return filepath.Join(m, self), nil
}

// CheckParent verifies that dir may hold new leaves: an absolute path to an
// existing cgroup v2 directory that this user may write. Errors wrap
// ErrRelative, ErrNotCgroup or ErrNotWritable and name the path.
func CheckParent(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %q", ErrRelative, dir)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("cgroup parent %q: %w", dir, &os.PathError{Op: "statfs", Path: dir, Err: err})
	}
	if fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("%w: %q (filesystem type %#x)", ErrNotCgroup, dir, fs.Type)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("%w: %q: %v (run as root, or delegate the subtree to uid %d)", ErrNotWritable, dir, err, os.Getuid())
	}
	return checkCommonAncestor(dir)
}

// checkCommonAncestor applies the kernel's rule for starting a process in
// another cgroup (cgroup_procs_write_permission): the caller must be able
// to write cgroup.procs of the common ancestor of its own cgroup and the
// target. A delegated subtree satisfies it only from inside.
func checkCommonAncestor(dir string) error {
	m, err := Mount()
	if err != nil {
		return err
	}
	self, err := Self(0)
	if err != nil {
		return err
	}
	anc := commonAncestor(filepath.Join(m, self), dir)
	procs := filepath.Join(anc, "cgroup.procs")
	if err := unix.Access(procs, unix.W_OK); err != nil {
		return fmt.Errorf("%w: %q: starting a process there needs write access to %s, the common ancestor of tether's own cgroup (%s) and the parent: %v (run tether from inside the delegated subtree)",
			ErrNotWritable, dir, procs, filepath.Join(m, self), err)
	}
	return nil
}

// commonAncestor returns the deepest directory containing both a and b.
func commonAncestor(a, b string) string {
	a, b = filepath.Clean(a), filepath.Clean(b)
	for {
		if b == a || strings.HasPrefix(b, a+"/") {
			return a
		}
		if a == "/" || a == "." {
			return a
		}
		a = filepath.Dir(a)
	}
}

// Writable reports whether CheckParent accepts dir, for callers choosing a
// default.
func Writable(dir string) bool { return CheckParent(dir) == nil }

func isPerm(err error) bool {
	return errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS)
}
