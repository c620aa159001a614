package contain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// v1Leaves returns the tether leaves under our own cgroup in each v1
// hierarchy.
func v1Leaves(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, ctrl := range cgroup.V1Controllers() {
		p, err := cgroup.V1Parent(ctrl)
		if err != nil {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(p, cgroup.LeafPrefix+"*"))
		for _, d := range m {
			out[d] = true
		}
	}
	return out
}

// TestFailedStartRemovesV1Leaves: a start that fails after the limits were
// written (an interpreter that does not exist) removes every cgroup it
// created, v1 leaves included, and the receipt names them.
func TestFailedStartRemovesV1Leaves(t *testing.T) {
	if _, err := cgroup.V1Parent("memory"); err != nil {
		t.Skipf("needs a v1 memory hierarchy (hybrid host): %v", err)
	}
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "bad")
			if err := os.WriteFile(script, []byte("#!/nonexistent\necho hi\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			before := v1Leaves(t)
			c := Command(script)
			c.Mechanism = mech
			c.Limits = limits.Spec{Memory: 64 << 20, Pids: 50}
			if err := c.Start(); err == nil {
				c.Wait()
				t.Fatalf("Start(%s) = nil, want an exec error", script)
			}
			r := c.Receipt()
			for d := range v1Leaves(t) {
				if !before[d] {
					t.Errorf("v1 leaf %s left after a failed start", d)
					os.Remove(d)
				}
			}
			if r.Limits == nil || len(r.Limits.V1Leaves) == 0 {
				t.Errorf("receipt limits = %+v, want the v1 leaves the start created", r.Limits)
			}
			if mech == receipt.MechanismCgroup && (r.Cgroup == nil || !r.Cgroup.Removed) {
				t.Errorf("receipt cgroup = %+v, want the v2 leaf removed", r.Cgroup)
			}
		})
	}
}
