package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestRunPoolBound (issue 25 item 3): 50 concurrent `tether run --pool p
// --max 3` never have more than 3 commands running at once — a probe
// samples the commands' own marks every 2 ms — and all 50 run, each
// waiting its turn (--pool-wait).
func TestRunPoolBound(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	dir := t.TempDir()
	const callers, max = 50, 3
	var peak, samples atomic.Int64
	stop := make(chan struct{})
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ents, _ := os.ReadDir(dir)
			if n := int64(len(ents)); n > peak.Load() {
				peak.Store(n)
			}
			samples.Add(1)
			time.Sleep(2 * time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	codes := make([]int, callers)
	errs := make([]string, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each waits its turn: 50 runs through 3 slots took 37 s in
			// a TCG guest that shared the host's cores, past 25 s of
			// --pool-wait and the 30 s runDeadline. Both are hang
			// guards here, not what the test asserts.
			cmd, _, stderr := tetherCmdFor(t, 5*time.Minute, "run", "-q", "--pool", "p", "--max", "3", "--pool-wait", "4m", "--", "sh", "-c",
				`mkdir "$D/in.$$" && sleep 0.1; rmdir "$D/in.$$"`)
			cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg, "D="+dir)
			codes[i] = wait(t, cmd)
			errs[i] = stderr.String()
		}()
	}
	wg.Wait()
	close(stop)
	<-probed
	for i, c := range codes {
		if c != 0 {
			t.Errorf("caller %d: exit %d: %s", i, c, errs[i])
		}
	}
	if p := peak.Load(); p > max || p < 2 {
		t.Errorf("at most %d commands ran at once (%d samples); want 2..%d: the pool's bound, and some concurrency", p, samples.Load(), max)
	}
	t.Logf("peak %d of %d, %d samples", peak.Load(), max, samples.Load())
	assertNoSurvivors(t)
}

// TestRunPoolDeadHolder (issue 25 item 3): the slot of a holder killed
// with SIGKILL is free at once — a new member is admitted without
// waiting — and a session counts in the same pool as runs do.
func TestRunPoolDeadHolder(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	holder, _, _ := tetherCmd(t, "run", "-q", "--pool", "q", "--max", "1", "--", "sleep", "1000")
	holder.Env = append(withoutEnv(holder.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg)
	if err := startCmd(holder); err != nil {
		t.Fatal(err)
	}
	// The holder is admitted once its record names the pool.
	for t0 := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		recs, _ := filepath.Glob(filepath.Join(xdg, "tether", "records", "run-*.json"))
		if len(recs) == 1 {
			if b, _ := os.ReadFile(recs[0]); strings.Contains(string(b), `"pool": "q"`) {
				break
			}
		}
		if time.Since(t0) > 10*time.Second {
			t.Fatal("the holder's run record never named pool q")
		}
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "run", "-q", "--pool", "q", "--max", "1", "--", "true"); code != 125 || !strings.Contains(stderr, "refused (pool-full)") {
		t.Errorf("a second member while the holder runs = %d (%s), want refused", code, stderr)
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	if code, _, stderr := tetherIn(t, xdg, nil, "run", "-q", "--pool", "q", "--max", "1", "--", "true"); code != 0 {
		t.Errorf("a member after the holder was killed = %d (%s), want admitted: a dead holder's slot is free", code, stderr)
	}
	// A session of the pool holds a slot that runs count.
	mustStart(t, xdg, nil, "-q", "--name", "member", "--pool", "q", "--", "sleep", "1000")
	if code, _, stderr := tetherIn(t, xdg, nil, "run", "-q", "--pool", "q", "--max", "1", "--", "true"); code != 125 {
		t.Errorf("a run while a session of the pool runs = %d (%s), want refused", code, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "member"); code != 0 {
		t.Fatalf("tether stop member = %d: %s", code, stderr)
	}
	// The killed holder's group is its watcher's to stop.
	for t0 := time.Now(); len(marked(marker(t))) > 0 && time.Since(t0) < 15*time.Second; time.Sleep(50 * time.Millisecond) {
	}
	assertNoSurvivors(t)
}
