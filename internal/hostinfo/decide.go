package hostinfo

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// decide fills what follows from the findings: where each limit would be
// enforced, the mechanism tether run would pick, whether containment is
// full, and the advice.
func decide(r *Report) {
	r.Limits = []Limit{}
	for _, c := range LimitControllers {
		r.Limits = append(r.Limits, decideLimit(r, c))
	}
	r.Mechanism = decideMechanism(r)
	f := r.Features
	// In a scope of its own the clone3 probe is not run (it would write
	// where systemd did not delegate); the scope is what run relies on.
	inScope := underSystemd(r) && !r.Cgroup.V2.LeafParent.Delegation.Delegated && r.Systemd.ManagerReachable
	r.FullContainment = r.Mechanism.Default == MechanismCgroup && (f.Clone3IntoCgroup.Available || inScope && !f.Clone3IntoCgroup.Probed) &&
		f.CgroupKill.Available && f.PidfdOpen.Available && f.ChildSubreaper.Available
	r.Advice = advise(r)
}

// decideLimit says where a limit on controller c would be enforced. A
// controller is bound to at most one hierarchy: v2 if the v2 root lists it,
// else the v1 hierarchy it is mounted as. v2 limits need it enabled in the
// leaf parent's cgroup.subtree_control (leaves then get its files); v1
// limits nest leaves under our own cgroup of that hierarchy.
func decideLimit(r *Report, c string) Limit {
	if l, ok := decideLimitSystemd(r, c); ok {
		return l
	}
	l := Limit{Controller: c, Where: WhereUnavailable}
	v := r.Cgroup.V2
	lp := v.LeafParent
	if v.Mount != "" && slices.Contains(v.RootControllers, c) {
		switch {
		case !slices.Contains(lp.Controllers, c):
			l.Why = fmt.Sprintf("%s is a cgroup v2 controller here but is not given to %s (not in its cgroup.controllers: an ancestor does not enable it in cgroup.subtree_control)", c, lp.Dir)
		case !lp.Usable:
			l.Why = fmt.Sprintf("%s is offered to %s, but tether cannot create leaves there: %s", c, lp.Dir, lp.Why)
		case slices.Contains(lp.SubtreeControl, c):
			l.Where, l.Dir = WhereV2, lp.Dir
			l.Why = fmt.Sprintf("%s is enabled in %s", c, filepath.Join(lp.Dir, "cgroup.subtree_control"))
		case !lp.SubtreeControlWritable:
			l.Why = fmt.Sprintf("%s is offered to %s but not enabled for its children, and uid %d may not write its cgroup.subtree_control", c, lp.Dir, r.UID)
		case lp.OwnProcesses > 0 && filepath.Clean(lp.Dir) != filepath.Clean(v.Mount):
			l.Why = fmt.Sprintf("%s is offered to %s but not enabled for its children, and tether cannot enable it: %s has %d processes of its own, and the kernel enables controllers only in a cgroup without processes (or the root)", c, lp.Dir, lp.Dir, lp.OwnProcesses)
		default:
			l.Where, l.Dir = WhereV2, lp.Dir
			l.Why = fmt.Sprintf("%s is offered to %s; tether enables it in its cgroup.subtree_control for the leaf", c, lp.Dir)
		}
		return l
	}
	i := slices.IndexFunc(r.Cgroup.V1, func(x V1Controller) bool { return x.Name == c })
	if i < 0 {
		l.Why = fmt.Sprintf("no hierarchy offers %s: it is neither a cgroup v2 controller here nor mounted as a v1 controller", c)
		return l
	}
	x := r.Cgroup.V1[i]
	switch {
	case x.Dir == "":
		l.Why = fmt.Sprintf("%s is a v1 controller mounted at %s, but our cgroup in it is unknown: %s", c, x.Mount, x.Why)
	case !x.Writable:
		l.Why = fmt.Sprintf("%s is a v1 controller mounted at %s; our cgroup there, %s, is not writable by uid %d", c, x.Mount, x.Dir, r.UID)
	default:
		l.Where, l.Dir = WhereV1, x.Dir
		l.Why = fmt.Sprintf("%s is a v1 controller mounted at %s; limited leaves go under our cgroup there, %s", c, x.Mount, x.Dir)
	}
	return l
}

// underSystemd reports whether systemd's rules decide where leaves go: a
// host booted with systemd, and no parent named by the caller.
func underSystemd(r *Report) bool {
	return r.Systemd.Booted && r.Cgroup.V2.Mount != "" && r.Cgroup.V2.LeafParent.Source == SourceOwn
}

// decideLimitSystemd says where a limit goes under systemd (ok false
// elsewhere), mirroring delegate.Prepare: in our own delegated cgroup when
// tether is its only process (it moves itself into a child first), never
// out of a delegated cgroup shared with others, else in a scope of its
// own when the manager offers the controller to scopes.
func decideLimitSystemd(r *Report, c string) (Limit, bool) {
	if !underSystemd(r) {
		return Limit{}, false
	}
	lp := r.Cgroup.V2.LeafParent
	l := Limit{Controller: c, Where: WhereUnavailable}
	switch {
	case lp.Delegation.Delegated && lp.OwnProcesses > 1:
		l.Why = fmt.Sprintf("our cgroup %s is delegated but holds %d processes, and a controller may be enabled for children only in a cgroup without processes; tether does not leave a delegated subtree it runs in", lp.Dir, lp.OwnProcesses)
	case lp.Delegation.Delegated && slices.Contains(lp.Controllers, c):
		l.Where, l.Dir = WhereV2, lp.Dir
		l.Why = fmt.Sprintf("our delegated cgroup %s offers %s; tether moves itself into %s/supervisor and enables it for its leaves", lp.Dir, c, lp.Dir)
	case lp.Delegation.Delegated:
		l.Why = fmt.Sprintf("our delegated cgroup %s is not offered %s (its manager does not delegate it)", lp.Dir, c)
	case !r.Systemd.ManagerReachable:
		l.Why = "no systemd manager answers to ask for a scope: " + r.Systemd.ManagerError
	case slices.Contains(r.Systemd.ScopeControllers, c):
		l.Where, l.Dir = WhereV2, "(a transient scope of its own)"
		l.Why = fmt.Sprintf("systemd's %s manager offers %s to the delegated scope tether asks it for", r.Systemd.Manager, c)
	default:
		l.Why = fmt.Sprintf("systemd's %s manager does not offer %s to scopes (offered: %s)", r.Systemd.Manager, c, strings.Join(r.Systemd.ScopeControllers, " "))
	}
	return l, true
}

// decideMechanism mirrors contain's choice: the given parent or our own
// cgroup; a given parent that cannot be used is an error, our own one
// means the fallback.
func decideMechanism(r *Report) Mechanism {
	v := r.Cgroup.V2
	lp := v.LeafParent
	if underSystemd(r) && !lp.Delegation.Delegated {
		if !r.Systemd.ManagerReachable {
			return Mechanism{Default: MechanismFallback, Why: fmt.Sprintf("systemd did not delegate our cgroup (%s), and no systemd manager answers to ask for a scope: %s", lp.Delegation.Detail, r.Systemd.ManagerError)}
		}
		return Mechanism{Default: MechanismCgroup, Why: fmt.Sprintf("systemd did not delegate our cgroup %s, so tether run asks systemd's %s manager for a transient scope with Delegate=yes (bound to the unit it runs in) and creates its leaves there", lp.Dir, r.Systemd.Manager)}
	}
	given := lp.Source != SourceOwn
	clone := r.Features.Clone3IntoCgroup
	switch {
	case given && !lp.Usable:
		return Mechanism{Default: MechanismError, Why: fmt.Sprintf("the cgroup parent from %s cannot be used, and tether run never falls back from a parent it was given: %s", lp.Source, lp.Why)}
	case v.Mount == "":
		return Mechanism{Default: MechanismFallback, Why: "no cgroup v2 hierarchy is mounted"}
	case !lp.Usable:
		return Mechanism{Default: MechanismFallback, Why: "tether cannot create leaves in our own cgroup: " + lp.Why}
	case clone.Probed && !clone.Available:
		return Mechanism{Default: MechanismError, Why: fmt.Sprintf("tether run would create its leaf in %s but fail to start the command into it: %s", lp.Dir, clone.Detail)}
	}
	why := fmt.Sprintf("leaves go in %s (%s), which uid %d may write", lp.Dir, lp.Source, r.UID)
	if !clone.Probed {
		why += "; starting into a leaf was not tried: " + clone.Detail
	}
	return Mechanism{Default: MechanismCgroup, Why: why}
}

// advise turns the findings into next steps, most important first.
func advise(r *Report) []string {
	out := []string{}
	v := r.Cgroup.V2
	lp := v.LeafParent
	f := r.Features
	switch m := r.Mechanism.Default; {
	case r.FullContainment:
		out = append(out, fmt.Sprintf("full containment available: tether run starts each command straight into a fresh leaf of %s and can stop all of it with cgroup.kill", lp.Dir))
	case v.Mount == "":
		out = append(out, "mount cgroup v2 to get containment (as root): mkdir -p /sys/fs/cgroup/unified && mount -t cgroup2 none /sys/fs/cgroup/unified, or boot with systemd.unified_cgroup_hierarchy=1; until then tether run uses the fallback")
	case lp.Delegation.Delegated && !lp.ContainsUs && (m == MechanismError || !lp.Usable):
		out = append(out, fmt.Sprintf("run tether from inside %s: the kernel lets a process start children into a cgroup only if it may write cgroup.procs of the common ancestor of its own cgroup (%s) and the target; move the shell that runs tether into it (as root: echo SHELL_PID > %s) or use a cgroup parent below your own cgroup",
			lp.Dir, v.Dir, filepath.Join(lp.Dir, "cgroup.procs")))
	case !lp.Usable && lp.Source != SourceOwn:
		out = append(out, fmt.Sprintf("fix the cgroup parent from %s, or drop it to let tether run use its own cgroup: %s", lp.Source, lp.Why))
		if r.UID != 0 {
			out = append(out, delegateAdvice(r)...)
		}
	case !lp.Usable:
		out = append(out, delegateAdvice(r)...)
	case m == MechanismError && !lp.ContainsUs:
		out = append(out, fmt.Sprintf("run tether from inside %s: the kernel lets a process start children into a cgroup only if it may write cgroup.procs of the common ancestor of its own cgroup (%s) and the target; move the shell that runs tether into it (as root: echo SHELL_PID > %s) or use a cgroup parent below your own cgroup",
			lp.Dir, v.Dir, filepath.Join(lp.Dir, "cgroup.procs")))
	case m == MechanismError:
		out = append(out, "starting a command into a leaf fails here: "+f.Clone3IntoCgroup.Detail)
	}
	if f.PidfdOpen.Probed && !f.PidfdOpen.Available {
		out = append(out, "upgrade the kernel: pidfd_open (Linux 5.3+) failed, and tether signals processes only through pidfds: "+f.PidfdOpen.Detail)
	}
	if f.CgroupKill.Probed && !f.CgroupKill.Available {
		out = append(out, "optional: a kernel with cgroup.kill (Linux 5.14+) kills a group in one write; until then tether freezes the leaf, SIGKILLs every verified member and thaws, until it is empty")
	}
	if f.PidfdCgroupID.Probed && !f.PidfdCgroupID.Available {
		out = append(out, "optional: a kernel with PIDFD_GET_INFO (Linux 6.13+) lets tether check a member's cgroup through its pidfd; until then it reads /proc/PID/cgroup")
	}
	if f.ChildSubreaper.Probed && !f.ChildSubreaper.Available {
		out = append(out, "PR_SET_CHILD_SUBREAPER is unavailable: orphans of the command are reparented to init instead of tether")
	}
	for _, l := range r.Limits {
		if l.Where == WhereUnavailable {
			out = append(out, limitAdvice(r, l))
		}
	}
	return out
}

// delegateAdvice says how an unprivileged user gets a cgroup tether can
// create leaves in.
func delegateAdvice(r *Report) []string {
	v := r.Cgroup.V2
	if r.UID == 0 {
		return []string{"tether cannot create leaves in our own cgroup even as root: " + v.LeafParent.Why}
	}
	out := []string{}
	or := ""
	if r.Systemd.UserManager {
		out = append(out, "the systemd way: systemd-run --user --scope -p Delegate=yes tether run -- COMMAND (systemd runs tether in a scope delegated to you, and tether creates its leaves there)")
		or = "or "
	}
	d := filepath.Join(v.Mount, fmt.Sprintf("tether.%d", r.UID))
	sh := filepath.Join(d, "shell")
	out = append(out,
		fmt.Sprintf("%sdelegate a subtree by hand, as root: mkdir -p %s && for d in %s %s; do chown %d $d $d/%s; done && echo SHELL_PID > %s; then, from that shell: tether run --cgroup-parent %s -- COMMAND (or export TETHER_CGROUP_PARENT=%s). The kernel lets a process start children into a cgroup only from inside the delegated subtree; the shell sits in a child so that %s holds no processes itself and may enable controllers for its leaves",
			or, sh, d, sh, r.UID, strings.Join(delegationFiles, " $d/"), filepath.Join(sh, "cgroup.procs"), d, d, d),
		"or run tether as root")
	return out
}

// limitAdvice says what would make limits on l.Controller enforceable.
func limitAdvice(r *Report, l Limit) string {
	c := l.Controller
	v := r.Cgroup.V2
	lp := v.LeafParent
	var fix string
	switch {
	case v.Mount != "" && slices.Contains(v.RootControllers, c) && !slices.Contains(lp.Controllers, c):
		fix = fmt.Sprintf("have it delegated down to %s: with systemd, -p Delegate=yes; by hand, enable +%s in cgroup.subtree_control of each ancestor (as root)", lp.Dir, c)
	case v.Mount != "" && slices.Contains(v.RootControllers, c) && !lp.Usable:
		fix = "they follow once tether can create leaves (above)"
	case v.Mount != "" && slices.Contains(v.RootControllers, c):
		fix = fmt.Sprintf("give tether an empty delegated parent (--cgroup-parent DIR, with the shell that runs tether in another cgroup), where it can enable +%s in cgroup.subtree_control", c)
	case slices.ContainsFunc(r.Cgroup.V1, func(x V1Controller) bool { return x.Name == c }):
		fix = "cgroup v1 has no safe delegation: run tether as root"
	default:
		fix = "the kernel offers no " + c + " controller; limits on it cannot be enforced"
	}
	return fmt.Sprintf("%s limits are unavailable (%s): %s", c, l.Why, fix)
}
