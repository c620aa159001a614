package cli_test

import (
	"strings"
	"sync"
	"testing"
)

// TestPoolAdmissionConcurrent is the regression test for the pool
// admission race: four concurrent `start --pool p --max 1` gave four live
// sessions. Exactly one may start; the others are refused as full.
func TestPoolAdmissionConcurrent(t *testing.T) {
	xdg := stateEnv(t)
	const n = 4
	codes := make([]int, n)
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		cmd, _, errb := tetherCmd(t, "start", "--pool", "p", "--max", "1", "--owner", "none", "--", "sleep", "1000")
		cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg)
		done := startTether(t, cmd)
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = <-done
			errs[i] = errb.String()
		}()
	}
	wg.Wait()
	started := 0
	for i, c := range codes {
		switch {
		case c == 0:
			started++
		case c != 125 || !strings.Contains(errs[i], "pool is full"):
			t.Errorf("start %d = %d, %q; want 0 or 125 with pool is full", i, c, errs[i])
		}
	}
	if started != 1 {
		t.Errorf("%d of %d concurrent starts of a --max 1 pool started, want 1", started, n)
	}
}
