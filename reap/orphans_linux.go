package reap

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/registry"
)

// orphanLeaves finds tether leaves that no record refers to, under the
// parents tether uses: the caller's own cgroup and the parents of recorded
// leaves. With o.OrphanLeaves, this user's are killed and removed.
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
			var st syscall.Stat_t
			if syscall.Stat(path, &st) != nil {
				continue
			}
			ol := OrphanLeaf{Path: path, ID: st.Ino}
			if b, err := os.ReadFile(filepath.Join(path, "cgroup.procs")); err == nil {
				ol.Procs = len(strings.Fields(string(b)))
			}
			if o.OrphanLeaves && !o.DryRun {
				if int(st.Uid) != os.Getuid() && os.Getuid() != 0 {
					ol.Error = "not this user's leaf: left alone"
				} else if l, err := cgroup.OpenLeaf(path, st.Ino); err != nil {
					ol.Error = err.Error()
				} else {
					l.Kill()
					l.WaitEmpty(killWait)
					if err := l.Remove(); err != nil {
						ol.Error = err.Error()
						l.Close()
					} else {
						ol.Removed = true
					}
				}
			}
			out = append(out, ol)
		}
	}
	return out
}
