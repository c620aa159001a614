package reap_test

import (
	"errors"
	"os"
	"testing"

	"github.com/tether-run/tether/internal/cgroup"
)

// TestFaultV1LeavesReaped kills `tether run --memory --pids` at each crash
// point after its limits exist, on a hybrid host where they are v1
// leaves: the record names every v1 leaf, and one reap removes them all.
func TestFaultV1LeavesReaped(t *testing.T) {
	t.Parallel()
	if _, err := cgroup.V1Parent("memory"); err != nil {
		t.Skipf("needs a v1 memory hierarchy (hybrid host): %v", err)
	}
	for _, point := range []string{"before-start", "after-start", "stop-after-term", "stop-before-kill", "stop-before-rmdir"} {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			f.killedAt("tether run", point, f.crashRun(point, "--no-reap", "--memory", "64M", "--pids", "100", "--grace", "100ms"))
			before := f.recordFiles()
			var v1 []string
			for _, ff := range before {
				if ff.rec != nil {
					v1 = append(v1, ff.rec.V1Cgroups...)
				}
			}
			if len(v1) < 2 {
				t.Fatalf("records name v1 leaves %v, want the memory and pids leaves", v1)
			}
			t.Cleanup(func() {
				for _, p := range v1 {
					os.Remove(p)
				}
			})
			rr, rep := f.reap()
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			f.checkAccounted(before, rep)
			for _, p := range v1 {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("v1 leaf %s left after tether reap (%v)", p, err)
				}
			}
			f.checkNoop()
		})
	}
}
