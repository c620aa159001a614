package reap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/registry"
)

// orphanLeaves finds tether leaves that no record refers to, under the
// parents tether uses: the caller's own cgroup and the parents of recorded
// leaves. Nothing proves whose such a leaf is: a live session of another
// state dir, a Go program using the library, or a run between creating
// its leaf and writing its record. So reap never kills one: with
// o.OrphanLeaves it removes only empty leaves older than StaleAge, and
// reports populated ones.
func orphanLeaves(reg *registry.Registry, referenced map[string]bool, o Options) []OrphanLeaf {
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
			if !e.IsDir() || !strings.HasPrefix(e.Name(), cgroup.LeafPrefix) || referenced[path] {
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
	ol := OrphanLeaf{Path: path, ID: st.Ino}
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
	switch {
	case err != nil:
		ol.Error = err.Error()
		ol.Plan = "leave it: cannot tell whether it is populated"
	case ev.Populated:
		ol.Populated = true
		ol.Plan = "leave it: populated, and no record proves whose it is (another state dir, a library user, a start in flight)"
	case age < StaleAge:
		ol.Plan = fmt.Sprintf("leave it for now: empty but %s old, may belong to a start in flight", age.Round(time.Second))
	case int(st.Uid) != os.Getuid() && os.Getuid() != 0:
		ol.Plan = "leave it: not this user's leaf"
	case !o.OrphanLeaves:
		ol.Plan = "remove it with --orphan-leaves: empty and older than " + StaleAge.String()
	case o.DryRun:
		ol.Plan = "remove it: empty and older than " + StaleAge.String()
	default:
		ol.Plan = "remove it: empty and older than " + StaleAge.String()
		// Remove refuses a leaf that became populated since: never
		// written cgroup.kill, it stays usable by whoever starts into it.
		if err := l.Remove(); err != nil {
			ol.Error = err.Error()
		} else {
			ol.Removed = true
		}
	}
	return ol, true
}
