package cli_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/cli"
	"github.com/tether-run/tether/internal/hostinfo"
)

// doctorJSON decodes the output of tether doctor --json, failing t if it
// is not one JSON document or has a null anywhere.
func doctorJSON(t *testing.T, stdout string) hostinfo.Report {
	t.Helper()
	var r hostinfo.Report
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("tether doctor --json: %v\n%s", err, stdout)
	}
	if dec.More() {
		t.Errorf("tether doctor --json printed more than one JSON document:\n%s", stdout)
	}
	for _, p := range nullPaths(t, []byte(stdout)) {
		t.Errorf("tether doctor --json: %s = null, want a value (an empty list for a list)", p)
	}
	var raw map[string]any
	json.Unmarshal([]byte(stdout), &raw)
	if v, ok := raw["schema_version"].(float64); !ok || int(v) != hostinfo.SchemaVersion {
		t.Errorf("tether doctor --json: schema_version = %v, want %d", raw["schema_version"], hostinfo.SchemaVersion)
	}
	return r
}

func limitOf(r hostinfo.Report, c string) hostinfo.Limit {
	for _, l := range r.Limits {
		if l.Controller == c {
			return l
		}
	}
	return hostinfo.Limit{}
}

func TestDoctorJSON(t *testing.T) {
	parent := cgroupParent(t)
	code, stdout, stderr := tether(t, "doctor", "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("tether doctor --json = exit %d, stderr %q; want 0 and no stderr", code, stderr)
	}
	r := doctorJSON(t, stdout)
	mount, _ := cgroup.Mount()
	_, v1Memory := cgroup.V1Mounts()["memory"]
	wantMode := hostinfo.ModeUnified
	if v1Memory {
		// This machine (DESIGN.md): cgroup v2 beside v1 controllers, and
		// root may write our own v1 memory cgroup.
		wantMode = hostinfo.ModeHybrid
		if l := limitOf(r, "memory"); os.Geteuid() == 0 && l.Where != hostinfo.WhereV1 {
			t.Errorf("tether doctor --json: memory limit = %+v, want where v1", l)
		}
	}
	if r.Cgroup.Mode != wantMode {
		t.Errorf("tether doctor --json: cgroup.mode = %q, want %q", r.Cgroup.Mode, wantMode)
	}
	if r.Cgroup.V2.Mount != mount {
		t.Errorf("tether doctor --json: cgroup.v2.mount = %q, want %q (cgroup.Mount)", r.Cgroup.V2.Mount, mount)
	}
	if r.Cgroup.V2.LeafParent.Dir != parent || !r.Cgroup.V2.LeafParent.Usable {
		t.Errorf("tether doctor --json: leaf parent = %+v, want %s, usable", r.Cgroup.V2.LeafParent, parent)
	}
	f := r.Features
	if !f.PidfdOpen.Available || !f.Clone3IntoCgroup.Available || !f.CgroupKill.Available {
		t.Errorf("tether doctor --json: features = %+v, want pidfd_open, clone3_into_cgroup and cgroup_kill available", f)
	}
	if r.Mechanism.Default != hostinfo.MechanismCgroup || !r.FullContainment {
		t.Errorf("tether doctor --json: mechanism %+v, full containment %v; want cgroup, true", r.Mechanism, r.FullContainment)
	}
	if left := leaves(parent); len(left) != 0 {
		t.Errorf("tether doctor left leaves under %s: %q", parent, left)
	}
}

func TestDoctorText(t *testing.T) {
	cgroupParent(t)
	code, stdout, stderr := tether(t, "doctor")
	if code != 0 || stderr != "" {
		t.Fatalf("tether doctor = exit %d, stderr %q; want 0 and no stderr", code, stderr)
	}
	for _, want := range []string{"\ncgroup\n", "\ncgroup v1\n", "\nlimits\n", "\nkernel features\n", "\ntether run\n", "\nadvice\n",
		"  mode:", "  v2 mount:", "  clone3 CLONE_INTO_CGROUP: yes", "  mechanism:        cgroup:", "  - full containment available"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tether doctor: stdout has no %q:\n%s", want, stdout)
		}
	}
	// Values in a section start in one column.
	for _, sec := range strings.Split(stdout, "\n\n") {
		col := -1
		for _, line := range strings.Split(sec, "\n")[1:] {
			k, _, ok := strings.Cut(line, ": ")
			if !ok || strings.HasPrefix(line, "  - ") {
				continue
			}
			end := len(k) + 2
			for end < len(line) && line[end] == ' ' {
				end++
			}
			if col >= 0 && end != col {
				t.Errorf("tether doctor: value of %q starts at column %d, want %d like the rest of its section", line, end, col)
			}
			col = end
		}
	}
}

func TestDoctorUnprivileged(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			args := []string{"doctor"}
			if format == "json" {
				args = append(args, "--json")
			}
			cmd, stdout, stderr := nobodyCmd(t, args...)
			if code := wait(t, cmd); code != 0 {
				t.Fatalf("tether %s as uid %d = exit %d, want 0; stderr:\n%s", strings.Join(args, " "), nobodyUID, code, stderr)
			}
			if format == "text" {
				for _, want := range []string{"can create leaves:", "no: cgroup: parent is not writable", "mechanism:        fallback", "delegate a subtree by hand"} {
					if !strings.Contains(stdout.String(), want) {
						t.Errorf("tether doctor as uid %d: stdout has no %q:\n%s", nobodyUID, want, stdout)
					}
				}
				return
			}
			r := doctorJSON(t, stdout.String())
			lp := r.Cgroup.V2.LeafParent
			if r.UID != nobodyUID || lp.Usable || !strings.Contains(lp.Why, "not writable") {
				t.Errorf("tether doctor as uid %d: uid %d, leaf parent %+v; want not usable, because not writable", nobodyUID, r.UID, lp)
			}
			if lp.Delegation.Delegated || len(lp.Delegation.Owners) != 4 {
				t.Errorf("tether doctor as uid %d: delegation = %+v, want not delegated, with 4 owners", nobodyUID, lp.Delegation)
			}
			if r.Mechanism.Default != hostinfo.MechanismFallback || r.FullContainment {
				t.Errorf("tether doctor as uid %d: mechanism %+v, full containment %v; want fallback, false", nobodyUID, r.Mechanism, r.FullContainment)
			}
			if f := r.Features.Clone3IntoCgroup; f.Probed || f.Available {
				t.Errorf("tether doctor as uid %d: clone3 = %+v, want not probed", nobodyUID, f)
			}
			if !strings.Contains(strings.Join(r.Advice, "\n"), "delegate a subtree") {
				t.Errorf("tether doctor as uid %d: advice = %q, want delegation explained", nobodyUID, r.Advice)
			}
			if l := limitOf(r, "memory"); l.Where == hostinfo.WhereV1 {
				t.Errorf("tether doctor as uid %d: memory limit = %+v, want not v1 (our v1 cgroup is root's)", nobodyUID, l)
			}
		})
	}
}

// TestDoctorDelegatedElsewhere gives nobody a delegated cgroup that does
// not contain the doctor: the kernel refuses to start a process into it
// (the common ancestor's cgroup.procs is root's), and doctor must say so
// rather than promise cgroup containment.
func TestDoctorDelegatedElsewhere(t *testing.T) {
	needRoot(t)
	mount, err := cgroup.Mount()
	if err != nil {
		t.Skipf("needs cgroup v2: %v", err)
	}
	own := cgroupParent(t)
	if filepath.Clean(own) == filepath.Clean(mount) {
		t.Skip("needs our cgroup below the root, to create a cgroup beside it")
	}
	dir, err := os.MkdirTemp(filepath.Dir(own), "tethertest-")
	if err != nil {
		t.Fatalf("create test cgroup beside ours: %v", err)
	}
	t.Cleanup(func() {
		for _, l := range leaves(dir) {
			os.Remove(l)
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("remove test cgroup: %v", err)
		}
	})
	for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		if err := os.Chown(filepath.Join(dir, f), nobodyUID, nobodyUID); err != nil {
			t.Fatal(err)
		}
	}
	cmd, stdout, stderr := nobodyCmd(t, "doctor", "--json", "--cgroup-parent", dir)
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("tether doctor --cgroup-parent %s as uid %d = exit %d, want 0; stderr:\n%s", dir, nobodyUID, code, stderr)
	}
	r := doctorJSON(t, stdout.String())
	lp := r.Cgroup.V2.LeafParent
	// Delegated, but tether is outside it: the kernel's common-ancestor
	// rule forbids starting into it, and CheckParent says so up front.
	if lp.Usable || !lp.Delegation.Delegated || lp.ContainsUs || lp.Source != "--cgroup-parent" || !strings.Contains(lp.Why, "common ancestor") {
		t.Errorf("tether doctor (mount %s): leaf parent = %+v; want unusable for the common-ancestor rule, delegated, not containing us, from --cgroup-parent", mount, lp)
	}
	if r.Mechanism.Default != hostinfo.MechanismError {
		t.Errorf("tether doctor: mechanism = %+v, want error", r.Mechanism)
	}
	if len(r.Advice) == 0 || !strings.Contains(r.Advice[0], "run tether from inside "+dir) {
		t.Errorf("tether doctor: advice = %q, want first to run tether from inside %s", r.Advice, dir)
	}
	if left := leaves(dir); len(left) != 0 {
		t.Errorf("tether doctor left leaves under %s: %q", dir, left)
	}
}

func TestDoctorUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"argument", []string{"doctor", "extra"}, "unknown command"},
		{"unknown flag", []string{"doctor", "--bogus"}, "unknown flag"},
		{"relative parent", []string{"doctor", "--cgroup-parent", "rel/dir"}, "absolute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := tether(t, tc.args...)
			if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "tether: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("tether %s = exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr \"tether: ...%s...\"", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
			}
		})
	}
}

func TestDoctorHelp(t *testing.T) {
	code, stdout, stderr := tether(t, "doctor", "--help")
	if code != 0 {
		t.Fatalf("tether doctor --help = exit %d, want 0; stderr: %s", code, stderr)
	}
	for _, want := range []string{"--json", "--cgroup-parent", "delegated", "clone3", "cgroup.kill", "systemd-run --user --scope -p Delegate=yes"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tether doctor --help: stdout has no %q:\n%s", want, stdout)
		}
	}
}

// failWriter fails every write, as stdout does when its reader is gone.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestDoctorWriteFailure(t *testing.T) {
	for _, args := range [][]string{{"doctor"}, {"doctor", "--json"}} {
		var stderr strings.Builder
		if code := cli.Main(args, strings.NewReader(""), failWriter{}, &stderr); code != cli.ExitFailure || !strings.Contains(stderr.String(), "broken pipe") {
			t.Errorf("cli.Main(%q) with a failing stdout = %d, stderr %q; want %d and the write error", args, code, stderr.String(), cli.ExitFailure)
		}
	}
}
