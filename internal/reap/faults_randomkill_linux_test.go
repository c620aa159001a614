package reap_test

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/reap"
)

// TestFaultRandomKills is not parallel: it checks the v1 leaves under the
// test binary's own v1 cgroups, which parallel tests share.
//
// It SIGKILLs `tether run` at random moments (starting,
// running, stopping) across 200 runs, a quarter of them with v1 limits
// where the host has them, then runs one `tether reap`: no process
// survives, every record is in the report and accounted for, and no leaf
// (v2 or recorded v1) is left.
func TestFaultRandomKills(t *testing.T) {
	const runs, parallel = 200, 6
	f := faultSetup(t)
	_, v1err := cgroup.V1Parent("memory")
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for i := range runs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			args := []string{"run", "--no-reap", "--timeout", (time.Duration(mrand.N(150)) * time.Millisecond).String(), "--grace", "50ms"}
			if i%4 == 0 && v1err == nil {
				args = append(args, "--memory", "64M")
			}
			args = append(args, "--", "sh", "-c", faultRunScript)
			ctx, cancel := context.WithTimeout(context.Background(), faultDeadline)
			defer cancel()
			cmd := f.command(ctx, nil, args...)
			if err := cmd.Start(); err != nil {
				mu.Lock()
				failures = append(failures, err.Error())
				mu.Unlock()
				return
			}
			time.Sleep(time.Duration(mrand.N(250)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("starting tether: %v", failures)
	}
	before := f.recordFiles()
	var v1 []string
	for _, ff := range before {
		if ff.rec != nil {
			v1 = append(v1, ff.rec.V1Cgroups...)
		}
	}
	t.Logf("%d runs, %d record files left by the kills, %d recorded v1 leaves", runs, len(before), len(v1))
	rr, rep := f.reapWith(nil, "--grace", "100ms")
	if rr.code != 0 {
		t.Errorf("tether reap = %s: %s", rr, rr.stderr)
	}
	f.assertNoSurvivors("after one tether reap")
	f.checkAccounted(before, rep)
	for fn, ff := range before {
		if ff.rec == nil {
			continue
		}
		for _, p := range ff.rec.V1Cgroups {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				a := faultAction(rep, ff.rec.Name)
				t.Errorf("v1 leaf %s of records/%s (state %s) left after tether reap (%v); reap: %+v", p, fn, ff.rec.State, err, a)
			}
		}
	}
	// A run killed between creating its leaves and recording them leaves
	// them empty and unrecorded: reported, never killed, removed once old
	// enough (v2 and v1 alike).
	long := time.Now().Add(-2 * reap.StaleAge)
	for _, ol := range rep.OrphanLeaves {
		if ol.Populated || ol.Removed {
			t.Errorf("orphan leaf %+v: want an empty one, reported only", ol)
		}
		os.Chtimes(ol.Path, long, long)
	}
	rr, rep2 := f.reapWith(nil, "--orphan-leaves")
	if rr.code != 0 {
		t.Errorf("tether reap --orphan-leaves = %s: %s", rr, rr.stderr)
	}
	for _, ol := range rep2.OrphanLeaves {
		if !ol.Removed || ol.Error != "" {
			t.Errorf("tether reap --orphan-leaves: %+v, want removed", ol)
		}
	}
	t.Logf("%d orphan leaves (killed before their record), %d removed by --orphan-leaves", len(rep.OrphanLeaves), len(rep2.OrphanLeaves))
	for _, ctrl := range cgroup.V1Controllers() {
		if p, err := cgroup.V1Parent(ctrl); err == nil {
			if left, _ := filepath.Glob(filepath.Join(p, cgroup.LeafPrefix+"*")); len(left) > 0 {
				t.Errorf("v1 %s leaves left: %v", ctrl, left)
			}
		}
	}
	f.checkNoop()
}
