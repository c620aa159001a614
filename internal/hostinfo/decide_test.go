package hostinfo

import (
	"strings"
	"testing"
)

// fakeReport is a report as Probe would fill it on a pure v2 host where
// uid 1000 owns a delegated, empty cgroup with memory enabled for its
// children, before decide runs.
func fakeReport() Report {
	r := newReport("linux")
	r.Supported = true
	r.UID = 1000
	r.Cgroup.Mode = ModeUnified
	v := &r.Cgroup.V2
	v.Mount = "/cg"
	v.Path = "/user/app"
	v.Dir = "/cg/user/app"
	v.RootControllers = []string{"cpu", "memory", "pids"}
	v.Controllers = []string{"cpu", "memory", "pids"}
	v.LeafParent = LeafParent{
		Dir: "/cg/user/app", Source: SourceOwn, Usable: true, ContainsUs: true,
		Controllers: []string{"cpu", "memory", "pids"}, SubtreeControl: []string{"memory"},
		SubtreeControlWritable: true, OwnProcesses: 1,
		Delegation: Delegation{Delegated: true, Owners: []Owner{}},
	}
	yes := Feature{Available: true, Probed: true, Detail: "ok"}
	r.Features = Features{PidfdOpen: yes, PidfdCgroupID: yes, Clone3IntoCgroup: yes, CgroupKill: yes, ChildSubreaper: yes}
	return r
}

func TestDecideLimit(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *Report)
		ctrl   string
		want   string
		why    string // a part of Why
	}{
		{"enabled for children", nil, "memory", WhereV2, "enabled in /cg/user/app/cgroup.subtree_control"},
		{"offered, parent has processes", nil, "pids", WhereUnavailable, "processes of its own"},
		{"offered, empty parent", func(r *Report) { r.Cgroup.V2.LeafParent.OwnProcesses = 0 }, "pids", WhereV2, "tether enables it"},
		{"offered, at the root", func(r *Report) { r.Cgroup.V2.LeafParent.Dir = "/cg/" }, "cpu", WhereV2, "tether enables it"},
		{"offered, subtree_control not ours", func(r *Report) { r.Cgroup.V2.LeafParent.SubtreeControlWritable = false }, "cpu", WhereUnavailable, "may not write"},
		{"not given to the parent", func(r *Report) { r.Cgroup.V2.LeafParent.Controllers = []string{"memory"} }, "pids", WhereUnavailable, "not given to /cg/user/app"},
		{"parent not usable", func(r *Report) {
			r.Cgroup.V2.LeafParent.Usable = false
			r.Cgroup.V2.LeafParent.Why = "denied"
		}, "memory", WhereUnavailable, "cannot create leaves there: denied"},
		{"v1 writable", hybrid(true), "memory", WhereV1, "/sys/v1/memory/me"},
		{"v1 not writable", hybrid(false), "memory", WhereUnavailable, "not writable by uid 1000"},
		{"nowhere", hybrid(true), "pids", WhereUnavailable, "no hierarchy offers pids"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fakeReport()
			if tc.change != nil {
				tc.change(&r)
			}
			got := decideLimit(&r, tc.ctrl)
			if got.Where != tc.want || !strings.Contains(got.Why, tc.why) {
				t.Errorf("decideLimit(%s) = %+v, want where %q and why containing %q", tc.ctrl, got, tc.want, tc.why)
			}
			if (got.Where == WhereUnavailable) != (got.Dir == "") {
				t.Errorf("decideLimit(%s).Dir = %q with where %q, want a dir exactly when available", tc.ctrl, got.Dir, got.Where)
			}
		})
	}
}

// hybrid turns the fake report into a hybrid host whose v2 hierarchy has
// no controllers and whose memory controller is v1.
func hybrid(writable bool) func(r *Report) {
	return func(r *Report) {
		r.Cgroup.Mode = ModeHybrid
		r.Cgroup.V2.RootControllers = []string{"hugetlb"}
		r.Cgroup.V2.LeafParent.Controllers = []string{}
		r.Cgroup.V2.LeafParent.SubtreeControl = []string{}
		r.Cgroup.V1 = []V1Controller{{Name: "memory", Mount: "/sys/v1/memory", Path: "/me", Dir: "/sys/v1/memory/me", Writable: writable}}
	}
}

func TestDecideMechanism(t *testing.T) {
	tests := []struct {
		name   string
		change func(r *Report)
		want   string
		why    string
		full   bool
		advice string // a part of the first advice
	}{
		{"own cgroup", nil, MechanismCgroup, "uid 1000 may write", true, "full containment available"},
		{"no v2", func(r *Report) {
			r.Cgroup.V2.Mount = ""
			r.Cgroup.V2.LeafParent.Usable = false
		}, MechanismFallback, "no cgroup v2", false, "mount -t cgroup2"},
		{"own cgroup not writable", notWritable, MechanismFallback, "cannot create leaves in our own cgroup", false, "delegate a subtree by hand"},
		{"given parent not usable", func(r *Report) {
			notWritable(r)
			r.Cgroup.V2.LeafParent.Source = "--cgroup-parent"
		}, MechanismError, "never falls back", false, "fix the cgroup parent from --cgroup-parent"},
		{"start refused outside the parent", func(r *Report) {
			r.Cgroup.V2.LeafParent.Dir = "/cg/elsewhere"
			r.Cgroup.V2.LeafParent.Source = "TETHER_CGROUP_PARENT"
			r.Cgroup.V2.LeafParent.ContainsUs = false
			r.Features.Clone3IntoCgroup = Feature{Probed: true, Detail: "permission denied"}
		}, MechanismError, "fail to start", false, "run tether from inside /cg/elsewhere"},
		{"no cgroup.kill", func(r *Report) {
			r.Features.CgroupKill = Feature{Probed: true, Detail: "missing"}
		}, MechanismCgroup, "may write", false, "cgroup.kill (Linux 5.14+)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fakeReport()
			if tc.change != nil {
				tc.change(&r)
			}
			decide(&r)
			if r.Mechanism.Default != tc.want || !strings.Contains(r.Mechanism.Why, tc.why) {
				t.Errorf("decide().Mechanism = %+v, want %q with why containing %q", r.Mechanism, tc.want, tc.why)
			}
			if r.FullContainment != tc.full {
				t.Errorf("decide().FullContainment = %v, want %v", r.FullContainment, tc.full)
			}
			if len(r.Advice) == 0 || !strings.Contains(r.Advice[0], tc.advice) {
				t.Errorf("decide().Advice = %q, want the first to contain %q", r.Advice, tc.advice)
			}
		})
	}
}

func notWritable(r *Report) {
	r.UID = 1000
	r.Cgroup.V2.LeafParent.Usable = false
	r.Cgroup.V2.LeafParent.Why = "cgroup: parent is not writable"
	r.Features.Clone3IntoCgroup = Feature{Detail: "not probed"}
}

func TestAdviseSystemd(t *testing.T) {
	tests := []struct {
		name    string
		uid     int
		manager bool
		want    string
		notWant string
	}{
		{"user with systemd", 1000, true, "systemd-run --user --scope -p Delegate=yes tether run", ""},
		{"user without systemd", 1000, false, "chown 1000 $d $d/cgroup.procs $d/cgroup.subtree_control $d/cgroup.threads", "systemd-run"},
		{"root", 0, true, "even as root", "systemd-run"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := fakeReport()
			notWritable(&r)
			r.UID = tc.uid
			r.Systemd.UserManager = tc.manager
			decide(&r)
			all := strings.Join(r.Advice, "\n")
			if !strings.Contains(all, tc.want) {
				t.Errorf("advise(uid %d, user manager %v) = %q, want it to contain %q", tc.uid, tc.manager, r.Advice, tc.want)
			}
			if tc.notWant != "" && strings.Contains(all, tc.notWant) {
				t.Errorf("advise(uid %d, user manager %v) = %q, want no %q", tc.uid, tc.manager, r.Advice, tc.notWant)
			}
		})
	}
}

func TestAdviseLimits(t *testing.T) {
	r := fakeReport()
	hybrid(false)(&r)
	decide(&r)
	var got []string
	for _, a := range r.Advice {
		if strings.Contains(a, "limits are unavailable") {
			got = append(got, a)
		}
	}
	if len(got) != 3 || !strings.Contains(got[0], "run tether as root") || !strings.Contains(got[1], "no pids controller") {
		t.Errorf("advise(hybrid, v1 not writable) limit advice = %q, want memory (run as root), pids and cpu (no controller)", got)
	}
}
