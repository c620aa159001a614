package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tether-run/tether/internal/procfs"
	"github.com/tether-run/tether/internal/randid"
	"golang.org/x/sys/unix"
)

// V1Leaf is a leaf in one cgroup v1 hierarchy. On hybrid hosts, where the
// memory, pids and cpu controllers are bound to v1, it carries a run's
// limits beside its v2 leaf. It is created under the caller's own path in
// that hierarchy, with an exclusive mkdir, and never reused.
type V1Leaf struct {
	Controller string
	Path       string
	Parent     string
}

// V1Parent returns the directory of the caller's own cgroup in the v1
// hierarchy of controller, or an error naming why there is none.
func V1Parent(controller string) (string, error) {
	m, ok := V1Mounts()[controller]
	if !ok {
		return "", fmt.Errorf("cgroup: no v1 hierarchy has the %s controller", controller)
	}
	self, err := SelfV1(0)
	if err != nil {
		return "", err
	}
	p, ok := self[controller]
	if !ok {
		return "", fmt.Errorf("cgroup: /proc/self/cgroup has no %s line", controller)
	}
	return filepath.Join(m, p), nil
}

// CreateV1 makes a fresh leaf for controller under the caller's own v1
// cgroup.
func CreateV1(controller string) (*V1Leaf, error) {
	parent, err := V1Parent(controller)
	if err != nil {
		return nil, err
	}
	if err := unix.Access(parent, unix.W_OK); err != nil {
		return nil, fmt.Errorf("%w: v1 %s cgroup %q: %v", ErrNotWritable, controller, parent, err)
	}
	for range 8 {
		path := filepath.Join(parent, LeafPrefix+randid.Hex(8))
		err := unix.Mkdir(path, 0o755)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "mkdir", Path: path, Err: err}
		}
		return &V1Leaf{Controller: controller, Path: path, Parent: parent}, nil
	}
	return nil, fmt.Errorf("cgroup: could not pick a fresh leaf name under %q", parent)
}

// WriteFile writes data to file in the leaf.
func (l *V1Leaf) WriteFile(file, data string) error {
	return writeFile(filepath.Join(l.Path, file), data)
}

// FilePath returns the path of file in the leaf.
func (l *V1Leaf) FilePath(file string) string { return filepath.Join(l.Path, file) }

// ReadFile reads file in the leaf, trimmed.
func (l *V1Leaf) ReadFile(file string) (string, error) {
	b, err := procfs.ReadFile(filepath.Join(l.Path, file))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Has reports whether the leaf has file (kernels and configurations differ:
// memory.memsw.* exists only with swap accounting).
func (l *V1Leaf) Has(file string) bool {
	_, err := os.Stat(filepath.Join(l.Path, file))
	return err == nil
}

// AddThread moves one thread into the leaf. v1 membership is per thread:
// a process forked by that thread is born in the leaf.
func (l *V1Leaf) AddThread(tid int) error {
	return l.WriteFile("tasks", strconv.Itoa(tid))
}

// Remove removes the leaf, retrying EBUSY for a bounded time while its
// last tasks finish exiting.
func (l *V1Leaf) Remove() error {
	var err error
	for i := range 100 {
		err = unix.Rmdir(l.Path)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(time.Duration(min(i+1, 20)) * time.Millisecond)
	}
	return &os.PathError{Op: "rmdir", Path: l.Path, Err: err}
}

// MoveThreadV1 moves thread tid into dir of a v1 hierarchy (back to where
// it came from, after a spawn).
func MoveThreadV1(dir string, tid int) error {
	return writeFile(filepath.Join(dir, "tasks"), strconv.Itoa(tid))
}

// ThreadV1 returns thread tid's path in each v1 hierarchy as directories.
func ThreadV1(tid int) (map[string]string, error) {
	b, err := procfs.ReadFile(fmt.Sprintf("/proc/self/task/%d/cgroup", tid))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	mounts := V1Mounts()
	for c, p := range ParseProcCgroupV1(b) {
		if m, ok := mounts[c]; ok {
			out[c] = filepath.Join(m, p)
		}
	}
	return out, nil
}

func writeFile(path, data string) error { return writeFileAt(unix.AT_FDCWD, path, path, data) }

// writeFileAt writes data to name relative to dirfd in one write(2), as
// cgroup files require; path names it in errors.
func writeFileAt(dirfd int, name, path, data string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(data)); err != nil {
		return fmt.Errorf("cgroup: write %q: %w", data, &os.PathError{Op: "write", Path: path, Err: err})
	}
	return nil
}
