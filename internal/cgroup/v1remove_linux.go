package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// RemoveRecordedV1 removes a v1 leaf a record names (the limits of a run
// on a hybrid host), proving what it can first: p must be a tether leaf
// strictly inside a mounted v1 hierarchy, a directory of the caller's
// (or the caller is root), and hold no task. A leaf with tasks is
// reported, never emptied: only the run's v2 leaf proves whose a process
// is, and it is stopped first. A missing leaf is not an error.
func RemoveRecordedV1(p string) error {
	if !inV1(p) || !IsLeafName(filepath.Base(p)) {
		return fmt.Errorf("cgroup: recorded v1 cgroup %q is not a tether leaf in a v1 hierarchy: left alone", p)
	}
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || (int(st.Uid) != os.Getuid() && os.Getuid() != 0) {
		return fmt.Errorf("cgroup: v1 cgroup %q is not this user's directory: left alone", p)
	}
	var err error
	for i := range 100 {
		if b, rerr := os.ReadFile(filepath.Join(p, "tasks")); rerr == nil && len(strings.TrimSpace(string(b))) > 0 {
			return fmt.Errorf("cgroup: v1 cgroup %q still has tasks %v: left alone", p, strings.Fields(string(b)))
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
	for _, m := range V1Mounts() {
		if strings.HasPrefix(p, m+"/") {
			return true
		}
	}
	return false
}
