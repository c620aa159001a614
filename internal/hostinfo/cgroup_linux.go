package hostinfo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/procfs"
	"golang.org/x/sys/unix"
)

// probeCgroups fills r.Cgroup as seen by r.UID.
func probeCgroups(r *Report, o Options) {
	probeV2(&r.Cgroup.V2, o, r.UID)
	r.Cgroup.V1 = probeV1(cgroup.V1Mounts())
	r.Cgroup.Mode = mode(r.Cgroup.V2.Mount != "", len(r.Cgroup.V1) > 0)
}

func mode(v2, v1 bool) string {
	switch {
	case v2 && v1:
		return ModeHybrid
	case v2:
		return ModeUnified
	case v1:
		return ModeLegacy
	}
	return ModeNone
}

// probeV2 reads the v2 hierarchy: our cgroup, the controllers along our
// path, and the directory leaves would go in.
func probeV2(v *V2, o Options, uid int) {
	lp := &v.LeafParent
	lp.Dir, lp.Source = o.CgroupParent, SourceOwn
	if o.CgroupParent != "" {
		lp.Source = o.ParentSource
		if lp.Source == "" {
			lp.Source = "given"
		}
	}
	m, err := cgroup.Mount()
	if err != nil {
		if !errors.Is(err, cgroup.ErrNoV2) {
			v.Error = err.Error()
		}
		lp.Why = err.Error()
		return
	}
	v.Mount = m
	self, err := cgroup.Self(0)
	if err != nil {
		v.Error = err.Error()
		lp.Why = err.Error()
		return
	}
	v.Path = self
	v.Dir = filepath.Join(m, self)
	v.RootControllers = readList(m, "cgroup.controllers")
	if self != "/" {
		v.ParentControllers = readList(filepath.Dir(v.Dir), "cgroup.controllers")
	}
	v.Controllers = readList(v.Dir, "cgroup.controllers")
	v.SubtreeControl = readList(v.Dir, "cgroup.subtree_control")

	if o.CgroupParent == "" {
		// What run uses: our own cgroup, or beside us when we sit in the
		// supervisor child of a delegated cgroup.
		lp.Dir = v.Dir
		if h, err := delegate.Parent(context.Background()); err == nil {
			lp.Dir = h.Dir
		}
	}
	if err := cgroup.CheckParent(lp.Dir); err != nil {
		lp.Why = err.Error()
	} else {
		lp.Usable = true
	}
	lp.Controllers = readList(lp.Dir, "cgroup.controllers")
	lp.SubtreeControl = readList(lp.Dir, "cgroup.subtree_control")
	lp.SubtreeControlWritable = unix.Access(filepath.Join(lp.Dir, "cgroup.subtree_control"), unix.W_OK) == nil
	lp.OwnProcesses = len(readList(lp.Dir, "cgroup.procs"))
	lp.Delegation = delegation(lp.Dir, uid)
	proveDelegation(&lp.Delegation, lp.Dir, lp.Source)
	lp.ContainsUs = within(v.Dir, lp.Dir)
}

// readList reads a space-separated cgroup list file such as
// cgroup.controllers; a file that cannot be read gives an empty list.
func readList(dir, name string) []string {
	b, err := procfs.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return []string{}
	}
	return parseList(b)
}

// parseList splits the contents of cgroup.controllers or
// cgroup.subtree_control into sorted names.
func parseList(b []byte) []string {
	out := strings.Fields(string(b))
	if out == nil {
		return []string{}
	}
	slices.Sort(out)
	return out
}

// within reports whether dir is base or lies below it.
func within(dir, base string) bool {
	if !filepath.IsAbs(base) {
		return false
	}
	rel, err := filepath.Rel(filepath.Clean(base), filepath.Clean(dir))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// delegation reports who owns dir and its delegation files.
func delegation(dir string, uid int) Delegation {
	d := Delegation{Delegated: true, Owners: []Owner{}}
	var wrong []string
	for _, f := range append([]string{"."}, delegationFiles...) {
		o := Owner{File: f, UID: -1}
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(dir, f), &st); err != nil {
			o.Error = (&os.PathError{Op: "stat", Path: filepath.Join(dir, f), Err: err}).Error()
			d.Delegated = false
			wrong = append(wrong, f+" (unreadable)")
		} else {
			o.UID = int(st.Uid)
			if o.UID != uid {
				d.Delegated = false
				wrong = append(wrong, fmt.Sprintf("%s (uid %d)", f, o.UID))
			}
		}
		d.Owners = append(d.Owners, o)
	}
	switch {
	case uid == 0:
		d.Detail = "we are root, and root may write any cgroup: delegation matters only to other users"
	case d.Delegated:
		d.Detail = fmt.Sprintf("the directory, %s are owned by uid %d", strings.Join(delegationFiles, ", "), uid)
	default:
		d.Detail = fmt.Sprintf("not delegated to uid %d: owned by another uid: %s", uid, strings.Join(wrong, ", "))
	}
	return d
}

// proveDelegation decides Delegated by the manager's rules (delegate.Check),
// not by file ownership alone: under systemd, files owned by a user are not
// delegation (everything below user@UID.service is the user's), and root
// may write anywhere but must not write where systemd did not delegate.
func proveDelegation(d *Delegation, dir, source string) {
	if source != SourceOwn {
		d.Delegated, d.Proof = true, string(delegate.ProofNamed)
		d.Detail = "named by " + source + ": its delegation is the caller's word; " + d.Detail
		return
	}
	p, err := delegate.Check(context.Background(), dir)
	switch {
	case err != nil:
		d.Delegated, d.Detail = false, err.Error()
	case p == delegate.ProofNoManager:
		d.Proof = string(p)
		d.Detail = "no systemd on this host: write permission decides; " + d.Detail
	default:
		d.Delegated, d.Proof = true, string(p)
		d.Detail = fmt.Sprintf("proven by %s: %s", p, p.Establishes())
	}
}

// probeV1 describes each mounted v1 controller and our cgroup in it.
func probeV1(mounts map[string]string) []V1Controller {
	out := []V1Controller{}
	paths, err := cgroup.SelfV1(0)
	for _, name := range slices.Sorted(maps.Keys(mounts)) {
		c := V1Controller{Name: name, Mount: mounts[name]}
		p, ok := paths[name]
		switch {
		case err != nil:
			c.Why = err.Error()
		case !ok:
			c.Why = fmt.Sprintf("no %s line in /proc/self/cgroup", name)
		default:
			c.Path = p
			c.Dir = filepath.Join(c.Mount, p)
			if werr := unix.Access(c.Dir, unix.W_OK); werr != nil {
				c.Why = (&os.PathError{Op: "access W_OK", Path: c.Dir, Err: werr}).Error()
			} else {
				c.Writable = true
			}
		}
		out = append(out, c)
	}
	return out
}
