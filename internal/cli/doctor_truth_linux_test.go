package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/tether-run/tether/internal/hostinfo"
)

// TestDoctorPredictsRun: what `tether doctor` says `tether run` would do
// here is what it does: the mechanism, and for each limit whether it is
// enforced in cgroup v2, v1, or not at all. It holds on every host the
// suite runs on (hybrid here; pure v2 under systemd in the VM matrix).
func TestDoctorPredictsRun(t *testing.T) {
	code, stdout, stderr := tether(t, "doctor", "--json")
	if code != 0 {
		t.Fatalf("tether doctor --json = %d: %s", code, stderr)
	}
	d := doctorJSON(t, stdout)
	rpath := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr = tether(t, "run", "--limits", "best-effort", "--memory", "256M", "--pids", "100", "--cpus", "1", "--receipt", rpath, "--", "true")
	if code != 0 {
		t.Fatalf("tether run = %d: %s", code, stderr)
	}
	r, _ := readReceipt(t, rpath)
	if string(r.Mechanism) != d.Mechanism.Default {
		t.Errorf("doctor says mechanism %q (%s); run used %q", d.Mechanism.Default, d.Mechanism.Why, r.Mechanism)
	}
	got := map[string]string{}
	for _, a := range r.Limits.Applied {
		got[a.Name] = a.Backend
	}
	for _, n := range r.Limits.NotApplied {
		got[n.Name] = hostinfo.WhereUnavailable
	}
	for ctrl, name := range map[string]string{"memory": "memory", "pids": "pids", "cpu": "cpus"} {
		l := limitOf(d, ctrl)
		if got[name] != l.Where {
			t.Errorf("doctor says %s limits go to %q (%s); run put --%s in %q", ctrl, l.Where, l.Why, name, got[name])
		}
	}
	assertNoSurvivors(t)
}
