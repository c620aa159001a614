// Package cgroup creates, watches, kills and removes cgroup v2 leaves.
//
// tether owns one fresh leaf per start: it is created with an exclusive
// mkdir (never reused), held through a directory fd, and identified by its
// cgroup id, the inode number of that directory. Files in the leaf are
// opened through the held fd, so a leaf renamed or replaced under the same
// path is never written by mistake.
//
// The v2 hierarchy is found from /proc/self/mountinfo, never assumed at
// /sys/fs/cgroup: hybrid hosts mount it elsewhere (for example
// /sys/fs/cgroup/unified) beside v1 controllers.
package cgroup

import (
	"errors"
	"strings"
)

var (
	// ErrNoV2 is returned when no cgroup2 filesystem is mounted. Callers
	// fall back to a weaker mechanism or refuse to start.
	ErrNoV2 = errors.New("cgroup: no cgroup v2 hierarchy is mounted")
	// ErrNotCgroup is returned for a parent path that is not a directory of
	// the cgroup v2 filesystem.
	ErrNotCgroup = errors.New("cgroup: not a cgroup v2 directory")
	// ErrRelative is returned for a parent path that is not absolute.
	ErrRelative = errors.New("cgroup: parent path must be absolute")
	// ErrNotWritable is returned when the parent cannot hold new leaves for
	// this user (not delegated, or not root).
	ErrNotWritable = errors.New("cgroup: parent is not writable")
	// ErrKilled is returned when starting into a leaf that was written
	// cgroup.kill: the kernel kills anything cloned into it later.
	ErrKilled = errors.New("cgroup: leaf was killed and may not be reused")
	// ErrNotSame is returned by OpenLeaf when the directory at a recorded
	// path is not the recorded cgroup: it must be left alone.
	ErrNotSame = errors.New("cgroup: not the recorded leaf")
	// ErrClosed is returned for operations on a closed or removed leaf.
	ErrClosed = errors.New("cgroup: leaf is closed")
	// ErrSealed is returned when starting into a leaf whose stop has
	// begun (Seal): nothing may join a group the stop has looked at.
	ErrSealed = errors.New("cgroup: leaf is sealed: its stop has begun")
)

// LeafPrefix starts the name of every leaf tether creates, so that leaves
// can be told apart from other cgroups under a shared parent.
const LeafPrefix = "tether-"

// IsLeafName reports whether name is one tether gives its leaves:
// LeafPrefix and 16 lowercase hex digits. What acts on a recorded or
// found cgroup (reap, reclaim) acts only on such names: other tether-*
// directories (a test suite's parent, a user's own) are not leaves.
func IsLeafName(name string) bool {
	hex, ok := strings.CutPrefix(name, LeafPrefix)
	if !ok || len(hex) != 16 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if c := hex[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
