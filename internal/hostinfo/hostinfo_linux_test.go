package hostinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/leakcheck"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// ownParent returns where our leaves go by default (our own cgroup, or
// beside us when we sit in a delegated cgroup's supervisor child, as test
// binaries do under systemd), skipping t unless this user may create
// leaves there.
func ownParent(t *testing.T) string {
	t.Helper()
	h, err := delegate.Parent(context.Background())
	if err != nil {
		t.Skipf("no delegated cgroup v2 parent: %v", err)
	}
	p := h.Dir
	if err := cgroup.CheckParent(p); err != nil {
		t.Skipf("needs a writable cgroup v2 parent: %v", err)
	}
	return p
}

// tetherLeaves lists the tether leaves directly under dir.
func tetherLeaves(dir string) []string {
	out, _ := filepath.Glob(filepath.Join(dir, cgroup.LeafPrefix+"*"))
	return out
}

func TestProbeThisHost(t *testing.T) {
	parent := ownParent(t)
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("needs pidfd_open: %v", err)
	} else {
		unix.Close(fd)
	}
	before := tetherLeaves(parent)
	r, err := Probe()
	if err != nil {
		t.Fatalf("Probe() error = %v", err)
	}
	if after := tetherLeaves(parent); !slices.Equal(after, before) {
		t.Errorf("tether leaves under %s after Probe() = %q, want %q (the probe leaf must be removed)", parent, after, before)
	}

	mount, _ := cgroup.Mount()
	_, v1Memory := cgroup.V1Mounts()["memory"]
	wantMode, wantMemory := ModeUnified, ""
	if v1Memory {
		// A hybrid host like the one DESIGN.md describes: memory, pids and
		// cpu are v1 controllers, and root may write our v1 cgroups.
		wantMode = ModeHybrid
		if os.Geteuid() == 0 {
			wantMemory = WhereV1
		}
	}
	self, _ := cgroup.Self(0)
	checks := []struct {
		name      string
		got, want any
	}{
		{"Supported", r.Supported, true},
		{"SchemaVersion", r.SchemaVersion, SchemaVersion},
		{"UID", r.UID, os.Getuid()},
		{"Cgroup.Mode", r.Cgroup.Mode, wantMode},
		{"Cgroup.V2.Mount", r.Cgroup.V2.Mount, mount},
		{"Cgroup.V2.Path", r.Cgroup.V2.Path, self},
		{"Cgroup.V2.LeafParent.Dir", r.Cgroup.V2.LeafParent.Dir, parent},
		{"Cgroup.V2.LeafParent.Source", r.Cgroup.V2.LeafParent.Source, SourceOwn},
		{"Cgroup.V2.LeafParent.Usable", r.Cgroup.V2.LeafParent.Usable, true},
		{"Cgroup.V2.LeafParent.ContainsUs", r.Cgroup.V2.LeafParent.ContainsUs, true},
		{"Features.PidfdOpen.Available", r.Features.PidfdOpen.Available, true},
		{"Features.Clone3IntoCgroup.Available", r.Features.Clone3IntoCgroup.Available, true},
		{"Features.CgroupKill.Available", r.Features.CgroupKill.Available, true},
		{"Features.ChildSubreaper.Available", r.Features.ChildSubreaper.Available, true},
		{"Mechanism.Default", r.Mechanism.Default, MechanismCgroup},
		{"FullContainment", r.FullContainment, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("Probe().%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if wantMemory != "" && limit(r, "memory").Where != wantMemory {
		t.Errorf("Probe() memory limit = %+v, want where %q", limit(r, "memory"), wantMemory)
	}
	if len(r.Limits) != len(LimitControllers) {
		t.Errorf("Probe().Limits = %+v, want one per controller of %v", r.Limits, LimitControllers)
	}
	if !strings.Contains(r.Features.Clone3IntoCgroup.Detail, "leaf's cgroup id") && r.Features.PidfdCgroupID.Available {
		t.Errorf("Probe() clone3 detail = %q, want the placement checked by cgroup id", r.Features.Clone3IntoCgroup.Detail)
	}
	if len(r.Advice) == 0 || !strings.HasPrefix(r.Advice[0], "full containment available") {
		t.Errorf("Probe().Advice = %q, want it to start with full containment available", r.Advice)
	}
	for _, c := range r.Cgroup.V1 {
		if c.Mount != cgroup.V1Mounts()[c.Name] {
			t.Errorf("Probe() v1 %s mount = %q, want %q", c.Name, c.Mount, cgroup.V1Mounts()[c.Name])
		}
	}
	if len(r.Cgroup.V1) != len(cgroup.V1Mounts()) {
		t.Errorf("Probe() lists %d v1 controllers, want %d (%v)", len(r.Cgroup.V1), len(cgroup.V1Mounts()), cgroup.V1Mounts())
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null") {
		t.Errorf("json.Marshal(Probe()) has a null, want none:\n%s", b)
	}
}

func limit(r Report, c string) Limit {
	for _, l := range r.Limits {
		if l.Controller == c {
			return l
		}
	}
	return Limit{}
}

func TestProbeGivenParent(t *testing.T) {
	own := ownParent(t)
	dir, err := os.MkdirTemp(own, "hostinfotest-")
	if err != nil {
		t.Fatalf("create test cgroup: %v", err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove test cgroup: %v", err)
		}
	})
	notCgroup := t.TempDir()
	tests := []struct {
		name       string
		parent     string
		wantUsable bool
		wantMech   string
		wantClone  bool
	}{
		{"cgroup below ours", dir, true, MechanismCgroup, true},
		{"not a cgroup", notCgroup, false, MechanismError, false},
		{"missing", filepath.Join(dir, "missing"), false, MechanismError, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ProbeWith(Options{CgroupParent: tc.parent, ParentSource: "--cgroup-parent"})
			if err != nil {
				t.Fatalf("ProbeWith(%s) error = %v", tc.parent, err)
			}
			lp := r.Cgroup.V2.LeafParent
			if lp.Dir != tc.parent || lp.Source != "--cgroup-parent" || lp.Usable != tc.wantUsable {
				t.Errorf("ProbeWith(%s) leaf parent = %+v, want dir %s from --cgroup-parent, usable %v", tc.parent, lp, tc.parent, tc.wantUsable)
			}
			if r.Mechanism.Default != tc.wantMech {
				t.Errorf("ProbeWith(%s) mechanism = %+v, want %s", tc.parent, r.Mechanism, tc.wantMech)
			}
			if f := r.Features.Clone3IntoCgroup; f.Available != tc.wantClone || f.Probed != tc.wantClone {
				t.Errorf("ProbeWith(%s) clone3 = %+v, want available and probed %v", tc.parent, f, tc.wantClone)
			}
			if !tc.wantUsable && lp.Why == "" {
				t.Errorf("ProbeWith(%s) leaf parent why = \"\", want the reason", tc.parent)
			}
			if left := tetherLeaves(tc.parent); len(left) != 0 {
				t.Errorf("ProbeWith(%s) left leaves %q", tc.parent, left)
			}
		})
	}
}

func TestDelegation(t *testing.T) {
	dir := t.TempDir()
	for _, f := range delegationFiles[:2] {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	uid := os.Getuid()
	d := delegation(dir, uid)
	if d.Delegated {
		t.Errorf("delegation(dir without cgroup.threads) = delegated, want not: %+v", d)
	}
	want := []Owner{{".", uid, ""}, {"cgroup.procs", uid, ""}, {"cgroup.subtree_control", uid, ""}}
	if len(d.Owners) != 4 || !slices.Equal(d.Owners[:3], want) || d.Owners[3].UID != -1 || d.Owners[3].Error == "" {
		t.Errorf("delegation(dir).Owners = %+v, want %+v and cgroup.threads unreadable", d.Owners, want)
	}
	os.WriteFile(filepath.Join(dir, "cgroup.threads"), nil, 0o644)
	if d := delegation(dir, uid); !d.Delegated {
		t.Errorf("delegation(dir owned by uid %d, %d) = %+v, want delegated", uid, uid, d)
	}
	other := uid + 1
	if d := delegation(dir, other); d.Delegated || !strings.Contains(d.Detail, fmt.Sprintf("uid %d", uid)) {
		t.Errorf("delegation(dir owned by uid %d, %d) = %+v, want not delegated, naming uid %d", uid, other, d, uid)
	}
}

func TestParseList(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", []string{}},
		{"newline only", "\n", []string{}},
		{"sorted", "pids memory cpu\n", []string{"cpu", "memory", "pids"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseList([]byte(tc.in))
			if got == nil || !slices.Equal(got, tc.want) {
				t.Errorf("parseList(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		dir, base string
		want      bool
	}{
		{"/cg/a", "/cg/a", true},
		{"/cg/a/b", "/cg/a", true},
		{"/cg/ab", "/cg/a", false},
		{"/cg", "/cg/a", false},
		{"/cg/b", "/cg/a", false},
		{"/cg/a", "relative", false},
	}
	for _, tc := range tests {
		if got := within(tc.dir, tc.base); got != tc.want {
			t.Errorf("within(%q, %q) = %v, want %v", tc.dir, tc.base, got, tc.want)
		}
	}
}

func TestMode(t *testing.T) {
	tests := []struct {
		v2, v1 bool
		want   string
	}{
		{true, true, ModeHybrid},
		{true, false, ModeUnified},
		{false, true, ModeLegacy},
		{false, false, ModeNone},
	}
	for _, tc := range tests {
		if got := mode(tc.v2, tc.v1); got != tc.want {
			t.Errorf("mode(v2 %v, v1 %v) = %q, want %q", tc.v2, tc.v1, got, tc.want)
		}
	}
}
