package reap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/store"
)

// orphanLeaves finds tether leaves that no record refers to, under the
// parents tether uses: the caller's own cgroup and the parents of recorded
// leaves. Nothing proves whose such a leaf is: a live session of another
// state dir, a Go program using the library, or a run between creating
// its leaf and writing its record. So reap never kills one: with
// o.OrphanLeaves it removes only empty leaves older than StaleAge, and
// reports populated ones.
func orphanLeaves(reg *store.Registry, referenced map[string]bool, o Options) []OrphanLeaf {
	parents := map[string]bool{}
	if p, err := cgroup.DefaultParent(); err == nil {
		parents[p] = true
	}
	for leaf := range referenced {
		parents[filepath.Dir(leaf)] = true
	}
	out := []OrphanLeaf{}
	for p := range parents {
		ents, err := os.ReadDir(p)
		if err != nil {
			continue
		}
		for _, e := range ents {
			path := filepath.Join(p, e.Name())
			if !e.IsDir() || !cgroup.IsLeafName(e.Name()) || referenced[path] {
				continue
			}
			if ol, ok := orphanLeaf(path, o); ok {
				out = append(out, ol)
			}
		}
	}
	return out
}

// orphanLeaf inspects one unrecorded leaf and, when asked and allowed,
// removes it.
func orphanLeaf(path string, o Options) (OrphanLeaf, bool) {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return OrphanLeaf{}, false
	}
	ol := OrphanLeaf{Path: path, ID: st.Ino, Hierarchy: "v2"}
	if b, err := os.ReadFile(filepath.Join(path, "cgroup.procs")); err == nil {
		ol.Procs = len(strings.Fields(string(b)))
	}
	l, err := cgroup.OpenLeaf(path, st.Ino)
	if err != nil {
		ol.Error = err.Error()
		return ol, true
	}
	defer l.Close()
	ev, err := l.Events()
	age := time.Since(time.Unix(st.Mtim.Unix()))
	orphanPlan(&ol, err, ev.Populated, age, int(st.Uid), o, l.Remove)
	return ol, true
}

// orphanPlan decides what to do with an orphan leaf and, when allowed,
// removes it.
func orphanPlan(ol *OrphanLeaf, err error, populated bool, age time.Duration, uid int, o Options, remove func() error) {
	switch {
	case err != nil:
		ol.Error = err.Error()
		ol.Plan = "leave it: cannot tell whether it is populated"
	case populated:
		ol.Populated = true
		ol.Plan = "leave it: populated, and no record proves whose it is (another state dir, a library user, a start in flight)"
	case age < StaleAge:
		ol.Plan = fmt.Sprintf("leave it for now: empty but %s old, may belong to a start in flight", age.Round(time.Second))
	case uid != os.Getuid() && os.Getuid() != 0:
		ol.Plan = "leave it: not this user's leaf"
	case !o.OrphanLeaves:
		ol.Plan = "remove it with --orphan-leaves: empty and older than " + StaleAge.String()
	case o.DryRun:
		ol.Plan = "remove it: empty and older than " + StaleAge.String()
	default:
		ol.Plan = "remove it: empty and older than " + StaleAge.String()
		// Remove refuses a leaf that became populated since: never
		// written cgroup.kill, it stays usable by whoever starts into it.
		if err := remove(); err != nil {
			ol.Error = err.Error()
		} else {
			ol.Removed = true
		}
	}
}

// orphanV1Leaves finds the v1 leaves (hybrid hosts' limits) under the
// caller's own v1 cgroups that no record names: a run killed between
// creating them and recording them leaves them. Like v2 orphans, only
// empty ones older than StaleAge are removed, with o.OrphanLeaves.
func orphanV1Leaves(referenced map[string]bool, o Options) []OrphanLeaf {
	out := []OrphanLeaf{}
	seen := map[string]bool{}
	for _, ctrl := range cgroup.V1Controllers() {
		parent, err := cgroup.V1Parent(ctrl)
		if err != nil || seen[parent] {
			continue
		}
		seen[parent] = true
		ents, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range ents {
			path := filepath.Join(parent, e.Name())
			if !e.IsDir() || !cgroup.IsLeafName(e.Name()) || referenced[path] {
				continue
			}
			var st syscall.Stat_t
			if syscall.Lstat(path, &st) != nil {
				continue
			}
			ol := OrphanLeaf{Path: path, ID: st.Ino, Hierarchy: "v1 " + ctrl}
			b, err := os.ReadFile(filepath.Join(path, "tasks"))
			ol.Procs = len(strings.Fields(string(b)))
			orphanPlan(&ol, err, ol.Procs > 0, time.Since(time.Unix(st.Mtim.Unix())), int(st.Uid), o, func() error { return cgroup.RemoveRecordedV1(path) })
			out = append(out, ol)
		}
	}
	return out
}
