package reap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/registry"
)

// removeV1 removes the cgroup v1 leaves a dead record's run created for
// its limits. Only a directory that is a tether leaf inside a mounted v1
// hierarchy, this user's, and without tasks is removed: a leaf that still
// holds a task is reported, never killed (only the v2 leaf proves whose
// a process is, and it was stopped first).
func removeV1(rec *registry.Record) error {
	var errs []error
	for _, p := range rec.V1Cgroups {
		errs = append(errs, removeV1Leaf(p))
	}
	return errors.Join(errs...)
}

func removeV1Leaf(p string) error {
	if !inV1(p) || !strings.HasPrefix(filepath.Base(p), cgroup.LeafPrefix) {
		return fmt.Errorf("reap: recorded v1 cgroup %q is not a tether leaf in a v1 hierarchy: left alone", p)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || (int(st.Uid) != os.Getuid() && os.Getuid() != 0) {
		return fmt.Errorf("reap: v1 cgroup %q is not this user's directory: left alone", p)
	}
	var err error
	for i := range 100 {
		if b, rerr := os.ReadFile(filepath.Join(p, "tasks")); rerr == nil && len(strings.TrimSpace(string(b))) > 0 {
			return fmt.Errorf("reap: v1 cgroup %q still has tasks %v: left alone", p, strings.Fields(string(b)))
		}
		err = syscall.Rmdir(p)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			break
		}
		// Tasks that left the tasks file may still be finishing exit.
		time.Sleep(time.Duration(min(i+1, 20)) * time.Millisecond)
	}
	return &os.PathError{Op: "rmdir", Path: p, Err: err}
}

// inV1 reports whether p is strictly inside a mounted v1 hierarchy.
func inV1(p string) bool {
	if p != filepath.Clean(p) || !filepath.IsAbs(p) {
		return false
	}
	for _, m := range cgroup.V1Mounts() {
		if strings.HasPrefix(p, m+"/") {
			return true
		}
	}
	return false
}
