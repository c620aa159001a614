package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/internal/hostinfo"
)

// doctorOptions is `tether doctor` as its flags and environment resolved
// it.
type doctorOptions struct {
	json  bool
	probe hostinfo.Options
}

func newDoctorCmd(e *env) *cobra.Command { return newDoctorCmdRun(e, runDoctor) }

// newDoctorCmdRun is newDoctorCmd with run called on the parsed options.
func newDoctorCmdRun(e *env, run func(*env, *doctorOptions) error) *cobra.Command {
	var o doctorOptions
	var cgroupParent string
	cmd := &cobra.Command{
		Use:   "doctor [flags]",
		Short: "Explain what containment this host offers tether, and how to get more",
		Long: `Examine the host the way tether run sees it and explain what it offers:

  cgroup     the cgroup mode (unified, hybrid, legacy or none), the cgroup v2
             mount, our own cgroup, whether tether may create leaves in it,
             whether it is delegated to us (owner of the directory and of
             cgroup.procs, cgroup.subtree_control, cgroup.threads; under
             systemd, the proof and what it establishes: trusted.delegate,
             which only CAP_SYS_ADMIN can set, or the manager's answer over
             D-Bus prove a delegation; a user.* mark, which the cgroup's
             owner can set, proves only that root or you set it), and the
             controllers at the root, above us and in our cgroup
  cgroup v1  each mounted v1 controller, our cgroup in it, whether it is
             writable
  limits     where memory, pids and cpu limits would be enforced: v2, v1 or
             unavailable, and why
  kernel     pidfd_open, the PIDFD_GET_INFO cgroup id, clone3 with
             CLONE_INTO_CGROUP, cgroup.kill and the child subreaper, each
             probed by using it: the clone3 probe starts /bin/true in a fresh
             leaf, reaps it and removes the leaf
  tether run the mechanism it would pick by default (cgroup, fallback, or
             error when the leaf parent it was given cannot be used) and
             why, and the steps to full containment, such as delegating a
             subtree or: systemd-run --user --scope -p Delegate=yes tether run ...

The leaf parent is --cgroup-parent, else $TETHER_CGROUP_PARENT, else our own
cgroup, as for tether run.

On Windows the report is of Job Objects instead: the Windows (and Wine)
version, whether tether runs in a job and may let a child break away from it
(else sessions started here end with that job), a contained run of
cmd /c exit 0, and which limits a job keeps (set on an empty job and read
back).

Exit status: 0 when the report was produced, whatever the host lacks; 1 if
probing failed; 2 on bad usage.`,
		Example: `  tether doctor
  tether doctor --json
  tether doctor --cgroup-parent /sys/fs/cgroup/user.slice/user-1000.slice/tether`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.probe, err = doctorProbe(e, cgroupParent); err != nil {
				return exit(ExitUsage, err)
			}
			return run(e, &o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.json, "json", false, "print one JSON document instead of the report")
	fl.StringVar(&cgroupParent, "cgroup-parent", "", "examine this cgroup v2 `DIR` as the leaf parent (default $TETHER_CGROUP_PARENT, else our own cgroup)")
	return cmd
}

// doctorProbe is what doctor examines: the leaf parent --cgroup-parent
// gives (an absolute path), else $TETHER_CGROUP_PARENT's, else its own
// cgroup.
func doctorProbe(e *env, cgroupParent string) (hostinfo.Options, error) {
	o := hostinfo.Options{RuntimeDir: e.getenv("XDG_RUNTIME_DIR")}
	switch {
	case cgroupParent != "":
		if !filepath.IsAbs(cgroupParent) {
			return o, fmt.Errorf("--cgroup-parent %q: must be an absolute path in the cgroup v2 hierarchy", cgroupParent)
		}
		o.CgroupParent, o.ParentSource = cgroupParent, "--cgroup-parent"
	case e.getenv("TETHER_CGROUP_PARENT") != "":
		// A bad value here is a finding about the environment, reported
		// like any other.
		o.CgroupParent, o.ParentSource = e.getenv("TETHER_CGROUP_PARENT"), "TETHER_CGROUP_PARENT"
	}
	return o, nil
}

// runDoctor probes the host as o says and prints the report.
func runDoctor(e *env, o *doctorOptions) error {
	r, err := hostinfo.ProbeWith(o.probe)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return exit(ExitFailure, fmt.Errorf("doctor: %w", err))
	}
	if o.json {
		b, err := json.MarshalIndent(r, "", "  ")
		if err == nil {
			_, err = e.stdout.Write(append(b, '\n'))
		}
		if err != nil {
			return exit(ExitFailure, fmt.Errorf("doctor: write report: %w", err))
		}
		return nil
	}
	if err := writeDoctor(e.stdout, &r); err != nil {
		return exit(ExitFailure, fmt.Errorf("doctor: write report: %w", err))
	}
	return nil
}

// section is a titled group of key: value lines.
type section struct {
	title string
	rows  [][2]string
}

func (s *section) add(key, format string, a ...any) {
	s.rows = append(s.rows, [2]string{key, fmt.Sprintf(format, a...)})
}

// writeDoctor prints r as sections of aligned key: value lines, then the
// advice as a list.
func writeDoctor(w io.Writer, r *hostinfo.Report) error {
	var b strings.Builder
	for i, s := range doctorSections(r) {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s.title + "\n")
		width := 0
		for _, row := range s.rows {
			width = max(width, len(row[0]))
		}
		for _, row := range s.rows {
			fmt.Fprintf(&b, "  %-*s %s\n", width+1, row[0]+":", row[1])
		}
	}
	b.WriteString("\nadvice\n")
	for _, a := range r.Advice {
		b.WriteString("  - " + a + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func doctorSections(r *hostinfo.Report) []section {
	host := section{title: "host"}
	host.add("os", "%s", r.OS)
	if !r.Supported {
		host.add("supported", "no")
		return []section{host}
	}
	if r.Job != nil {
		return jobSections(r, host)
	}
	host.add("kernel", "%s", r.Kernel)
	if r.UID == 0 {
		host.add("uid", "0 (root: may write any cgroup)")
	} else {
		host.add("uid", "%d", r.UID)
	}
	secs := []section{host, v2Section(r)}

	v1 := section{title: "cgroup v1"}
	if len(r.Cgroup.V1) == 0 {
		v1.add("controllers", "none mounted")
	}
	for _, c := range r.Cgroup.V1 {
		state := "writable"
		if !c.Writable {
			state = "not writable: " + c.Why
		}
		path := c.Path
		if path == "" {
			path = "unknown"
		}
		v1.add(c.Name, "%s, our cgroup %s, %s", c.Mount, path, state)
	}
	secs = append(secs, v1)

	lim := section{title: "limits"}
	for _, l := range r.Limits {
		lim.add(l.Controller, "%s: %s", l.Where, l.Why)
	}
	secs = append(secs, lim)

	k := section{title: "kernel features"}
	f := r.Features
	k.add("pidfd_open", "%s", featureLine(f.PidfdOpen))
	k.add("PIDFD_GET_INFO cgroup id", "%s", featureLine(f.PidfdCgroupID))
	k.add("clone3 CLONE_INTO_CGROUP", "%s", featureLine(f.Clone3IntoCgroup))
	k.add("cgroup.kill", "%s", featureLine(f.CgroupKill))
	k.add("child subreaper", "%s", featureLine(f.ChildSubreaper))
	secs = append(secs, k)

	sd := section{title: "systemd"}
	sd.add("booted with systemd", "%s", yesNo(r.Systemd.Booted, "yes: its manager owns the cgroup tree; tether writes only where it delegated", "no (no /run/systemd/system)"))
	if r.Systemd.Booted {
		sd.add("manager for scopes", "%s: %s", orNone(r.Systemd.Manager, "none"), yesNo(r.Systemd.ManagerReachable, "reachable", "unreachable: "+r.Systemd.ManagerError))
		if r.Systemd.ManagerReachable {
			sd.add("scope controllers", "%s", list(r.Systemd.ScopeControllers))
		}
	}
	sd.add("user manager", "%s", yesNo(r.Systemd.UserManager, "found ($XDG_RUNTIME_DIR/systemd exists)", "not found (no $XDG_RUNTIME_DIR/systemd)"))
	sd.add("systemd-run", "%s", orNone(r.Systemd.SystemdRun, "not found"))
	secs = append(secs, sd)

	run := section{title: "tether run"}
	run.add("mechanism", "%s: %s", r.Mechanism.Default, r.Mechanism.Why)
	run.add("full containment", "%s", yesNo(r.FullContainment, "yes", "no"))
	return append(secs, run)
}

// jobSections are the report on Windows: the job mechanism, limits and
// tether run.
func jobSections(r *hostinfo.Report, host section) []section {
	j := r.Job
	host.add("windows", "%s", j.Windows)
	if j.Wine != "" {
		host.add("wine", "%s (not Windows: no job limit is kept)", j.Wine)
	}
	job := section{title: "job objects"}
	job.add("tether in a job", "%s", yesNo(j.InJob, "yes (runs' jobs are nested in it)", "no"))
	job.add("create in a job", "%s", featureLine(j.CreateInJob))
	job.add("breakaway", "%s", featureLine(j.Breakaway))
	lim := section{title: "limits"}
	for _, l := range r.Limits {
		lim.add(l.Controller, "%s: %s", l.Where, l.Why)
	}
	run := section{title: "tether run"}
	run.add("mechanism", "%s: %s", r.Mechanism.Default, r.Mechanism.Why)
	run.add("full containment", "%s", yesNo(r.FullContainment, "yes", "no"))
	return []section{host, job, lim, run}
}

func v2Section(r *hostinfo.Report) section {
	s := section{title: "cgroup"}
	v := r.Cgroup.V2
	s.add("mode", "%s", modeLine(r.Cgroup.Mode))
	if v.Mount == "" {
		s.add("v2 mount", "none%s", orNone(prefixed(": ", v.Error), ""))
		if v.LeafParent.Source != hostinfo.SourceOwn {
			s.add("leaf parent", "%s (%s): %s", v.LeafParent.Dir, v.LeafParent.Source, v.LeafParent.Why)
		}
		return s
	}
	s.add("v2 mount", "%s", v.Mount)
	if v.Error != "" {
		s.add("error", "%s", v.Error)
		return s
	}
	s.add("our cgroup", "%s (%s)", v.Path, v.Dir)
	s.add("root controllers", "%s", list(v.RootControllers))
	if v.Path == "/" {
		s.add("parent's controllers", "(our cgroup is the root)")
	} else {
		s.add("parent's controllers", "%s", list(v.ParentControllers))
	}
	s.add("our controllers", "%s", list(v.Controllers))
	s.add("our subtree_control", "%s", list(v.SubtreeControl))

	lp := v.LeafParent
	s.add("leaf parent", "%s (%s)", lp.Dir, lp.Source)
	if lp.Dir != v.Dir {
		s.add("its controllers", "%s", list(lp.Controllers))
		s.add("its subtree_control", "%s", list(lp.SubtreeControl))
		s.add("contains our cgroup", "%s", yesNo(lp.ContainsUs, "yes", "no"))
	}
	s.add("can create leaves", "%s", yesNo(lp.Usable, "yes", "no: "+lp.Why))
	switch {
	case r.UID == 0 && !r.Systemd.Booted:
		s.add("delegated", "not needed: %s", lp.Delegation.Detail)
	default:
		s.add("delegated", "%s: %s", yesNo(lp.Delegation.Delegated, "yes", "no"), lp.Delegation.Detail)
	}
	for _, o := range lp.Delegation.Owners {
		if o.Error != "" {
			s.add("owner of "+o.File, "unknown: %s", o.Error)
		} else {
			s.add("owner of "+o.File, "uid %d", o.UID)
		}
	}
	return s
}

func modeLine(m string) string {
	switch m {
	case hostinfo.ModeUnified:
		return m + " (cgroup v2 only)"
	case hostinfo.ModeHybrid:
		return m + " (cgroup v2, with controllers mounted as cgroup v1 beside it)"
	case hostinfo.ModeLegacy:
		return m + " (cgroup v1 only)"
	}
	return m + " (no cgroup filesystem)"
}

func featureLine(f hostinfo.Feature) string {
	switch {
	case f.Available:
		return "yes: " + f.Detail
	case f.Probed:
		return "no: " + f.Detail
	}
	return f.Detail
}

func list(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, " ")
}

func yesNo(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
