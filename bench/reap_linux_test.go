package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// BenchmarkReap times `tether reap` over 1k, 10k and 50k records (60%
// ended, 20% live and supervised, 15% with a dead supervisor, 5% corrupt),
// first as the machine is (load=0), then with 5,000 more `sleep`
// processes on it (load=5000; procs is the count in /proc). The issue's
// target is ≤ 200 ms for 10k records with the 5,000 processes.
//
// Per sub-benchmark, as medians in ms: dry-run is `tether reap --dry-run
// --json` as a whole process (the classification pass); real is `tether
// reap --json`, which also marks the dead records stopped and quarantines
// the corrupt ones (the state is restored, untimed, after each); lib-
// are the same two passes as reap.Run inside this process, without the
// binary's start-up and the JSON; empty is the dry run on an empty state
// dir, the floor. The -per-1k metrics show how the time grows with the
// records.
func BenchmarkReap(b *testing.B) {
	if _, err := identity.BootID(); err != nil {
		b.Skipf("no boot id: %v", err)
	}
	top := b
	bin := build(b, "../cmd/tether")
	live := sleepTokens(b, 10)
	dead := deadTokens(b, live)
	empty := newReapState(b, b, 0, live, dead)
	states := map[int]*reapState{}
	for _, load := range []int{0, 5000} {
		b.Run(fmt.Sprintf("load=%d", load), func(b *testing.B) {
			if load > 0 {
				startLoad(b, load)
			}
			procs := countProcs(b)
			for _, n := range []int{1000, 10000, 50000} {
				b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
					st := states[n]
					if st == nil {
						// Built once, owned by the top benchmark: both loads
						// and both calls of this body (b.N 1, then N) reuse it.
						st = newReapState(b, top, n, live, dead)
						states[n] = st
					}
					benchReap(b, bin, st, empty, procs)
				})
			}
		})
	}
}

// benchReap times the passes over st b.N times each, rotating which goes
// first, and restores st after each pass that changes it.
func benchReap(b *testing.B, bin string, st, empty *reapState, procs int) {
	runs := []struct {
		name   string
		writes bool
		f      func() time.Duration
	}{
		{"dry-run", false, func() time.Duration { return st.runBinary(b, bin, "reap", "--dry-run", "--json") }},
		{"real", true, func() time.Duration { return st.runBinary(b, bin, "reap", "--json") }},
		{"lib-dry-run", false, func() time.Duration { return st.runLibrary(b, reap.Options{DryRun: true}) }},
		{"lib-real", true, func() time.Duration { return st.runLibrary(b, reap.Options{}) }},
		{"empty", false, func() time.Duration { return empty.runBinary(b, bin, "reap", "--dry-run", "--json") }},
	}
	got := make([][]time.Duration, len(runs))
	b.ResetTimer()
	for i := range b.N {
		for j := range runs {
			k := (i + j) % len(runs)
			got[k] = append(got[k], runs[k].f())
			if runs[k].writes {
				b.StopTimer()
				st.restore(b)
				b.StartTimer()
			}
		}
	}
	for k, r := range runs {
		b.ReportMetric(median(got[k]), r.name+"-ms")
	}
	per1k := float64(st.n) / 1000
	b.ReportMetric(median(got[0])/per1k, "dry-run-ms-per-1k")
	b.ReportMetric(median(got[1])/per1k, "real-ms-per-1k")
	b.ReportMetric(median(got[2])/per1k, "lib-dry-run-ms-per-1k")
	b.ReportMetric(float64(procs), "procs")
}

// reapState is a private state dir of n records and what reap must make
// of them.
type reapState struct {
	xdg  string // XDG_RUNTIME_DIR; the registry is its tether/
	dir  string
	n    int
	want map[reap.Class]int
	// orig holds the records a real pass changes (dead ones are marked
	// stopped, corrupt ones renamed away), by path.
	orig map[string][]byte
}

// reapClass spreads the classes evenly through the names: of every 20
// records, 12 ended, 4 supervised, 3 dead, 1 corrupt.
func reapClass(i int) reap.Class {
	switch i % 20 {
	case 12, 13, 14, 15:
		return reap.Supervised
	case 16, 17, 18:
		return reap.DeadEmpty
	case 19:
		return reap.Corrupt
	}
	return reap.Ended
}

// newReapState writes n records through the registry, in a dir that
// lives as long as owner. Supervised records name the live tokens; dead
// ones name the dead tokens and have neither a leaf nor a main process, so
// a real pass only marks them stopped and can signal nothing. The leaves
// recorded for the others do not exist.
func newReapState(b, owner *testing.B, n int, live, dead []identity.Token) *reapState {
	b.Helper()
	xdg := runtimeDir(b, owner)
	reg, err := store.Open(filepath.Join(xdg, "tether"))
	if err != nil {
		b.Fatal(err)
	}
	st := &reapState{xdg: xdg, dir: reg.Dir, n: n, want: map[reap.Class]int{}, orig: map[string][]byte{}}
	parent, _ := cgroup.DefaultParent()
	ago := time.Now().UTC().Add(-time.Hour)
	for i := range n {
		name := fmt.Sprintf("bench-%06d", i)
		class := reapClass(i)
		if class != reap.Ended {
			// Ended records are kept in ended/, history that a reap
			// does not read (unless pruning, or a runtime dir is left).
			st.want[class]++
		}
		rec := &registry.Record{
			Name: name, Kind: "session", State: registry.StateRunning,
			Argv: []string{"npm", "run", "dev", "--", "--port", strconv.Itoa(3000 + i%1000)},
			Cwd:  "/home/dev/app", CreatedAt: ago, UpdatedAt: ago, Owner: "none",
			RuntimeDir: reg.RuntimeDir(name), Log: reg.LogPath(name, ""), Until: "main-exit",
		}
		leaf := func() {
			if parent != "" {
				rec.Mechanism, rec.Cgroup, rec.CgroupID = "cgroup", filepath.Join(parent, "tether-bench-"+name), uint64(1<<40+i)
			}
		}
		switch class {
		case reap.Ended:
			tok := dead[i%len(dead)].String()
			rec.Supervisor, rec.Main, rec.State, rec.StopReason = tok, tok, registry.StateStopped, "request"
			rec.Exit, rec.Receipt = &receipt.Exit{Code: 0, MainStatus: 0}, reg.ReceiptPath(name, "")
			leaf()
		case reap.Supervised:
			tok := live[i%len(live)].String()
			rec.Supervisor, rec.Main = tok, tok
			leaf()
		case reap.DeadEmpty:
			rec.Supervisor = dead[i%len(dead)].String()
		}
		path := filepath.Join(reg.Dir, "records", name+".json")
		if class == reap.Corrupt {
			// A record cut short, as by a full disk or a foreign writer.
			full, _ := json.Marshal(rec)
			st.orig[path] = full[:len(full)/2]
			if err := os.WriteFile(path, st.orig[path], 0o600); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if err := reg.Write(rec); err != nil {
			b.Fatal(err)
		}
		if class == reap.DeadEmpty {
			if st.orig[path], err = os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	}
	return st
}

// runtimeDir returns a private dir (0700) for XDG_RUNTIME_DIR that lives
// as long as owner: on tmpfs, as a real one is (/run/user/UID), when
// /dev/shm is tmpfs, else in the test's temp dir. Where the temp dir is on
// a disk, every file a real pass creates or renames costs ~3x more.
func runtimeDir(b, owner *testing.B) string {
	var fs unix.Statfs_t
	if unix.Statfs("/dev/shm", &fs) == nil && fs.Type == unix.TMPFS_MAGIC {
		if d, err := os.MkdirTemp("/dev/shm", "tether-bench-"); err == nil {
			owner.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	d := owner.TempDir()
	if err := os.Chmod(d, 0o700); err != nil {
		b.Fatal(err)
	}
	return d
}

// restore undoes a real pass.
func (s *reapState) restore(b *testing.B) {
	for path, data := range s.orig {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
		// A record the pass ended moved to ended/.
		os.Remove(filepath.Join(s.dir, "ended", filepath.Base(path)))
	}
	if err := os.RemoveAll(filepath.Join(s.dir, "quarantine")); err != nil {
		b.Fatal(err)
	}
}

// check fails b unless rep classified every record as built and, after a
// real pass, acted on each one that is not supervised.
func (s *reapState) check(b *testing.B, what string, rep *reap.Report) {
	b.Helper()
	got := map[reap.Class]int{}
	for _, a := range rep.Actions {
		got[a.Class]++
		if want := !rep.DryRun && a.Class != reap.Supervised; a.Done != want {
			b.Fatalf("%s: %s (%s): done %t, want %t; error %q", what, a.Name, a.Class, a.Done, want, a.Error)
		}
	}
	if !maps.Equal(got, s.want) || len(rep.OrphanLeaves) != 0 {
		b.Fatalf("%s: classes %v, want %v; orphan leaves %v", what, got, s.want, rep.OrphanLeaves)
	}
}

// runBinary times the tether binary on the state dir, then checks its
// report untimed.
func (s *reapState) runBinary(b *testing.B, bin string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+s.xdg)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	b.StopTimer()
	defer b.StartTimer()
	if err != nil {
		b.Fatalf("tether %v: %v\n%s", args, err, stderr.Bytes())
	}
	var rep reap.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		b.Fatalf("tether %v: %v", args, err)
	}
	s.check(b, "tether "+strings.Join(args, " "), &rep)
	return d
}

// runLibrary times store.Open and reap.Run, as the command makes them.
func (s *reapState) runLibrary(b *testing.B, o reap.Options) time.Duration {
	b.Helper()
	t0 := time.Now()
	reg, err := store.Open(s.dir)
	if err != nil {
		b.Fatal(err)
	}
	rep := reap.Run(reg, o)
	d := time.Since(t0)
	b.StopTimer()
	defer b.StartTimer()
	s.check(b, fmt.Sprintf("reap.Run(dry run %t)", o.DryRun), rep)
	return d
}

// sleepTokens starts n `sleep 1000` that live as long as b and returns
// their tokens: the supervisors of the live records.
func sleepTokens(b *testing.B, n int) []identity.Token {
	b.Helper()
	var toks []identity.Token
	for range n {
		c := exec.Command("sleep", "1000")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Process.Kill(); c.Wait() })
		tok, err := identity.Of(c.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		toks = append(toks, tok)
	}
	return toks
}

// deadTokens returns supervisors that are gone: half the real tokens of
// processes that exited, half tokens whose pid now belongs to another
// process (a live one's pid with an earlier start time).
func deadTokens(b *testing.B, live []identity.Token) []identity.Token {
	b.Helper()
	var toks []identity.Token
	for _, l := range live {
		c := exec.Command("sleep", "1000")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		tok, err := identity.Of(c.Process.Pid)
		c.Process.Kill()
		c.Wait()
		if err != nil {
			b.Fatal(err)
		}
		reused := l
		reused.StartTime--
		toks = append(toks, tok, reused)
	}
	return toks
}

// loadScript starts 1,000 `sleep 1000` and waits. On SIGTERM it ignores
// further ones, sends SIGTERM to its process group (its own: Setpgid) and
// reaps every sleep before it exits, so that none is left to pid 1.
const loadScript = `trap 'trap "" TERM; kill -TERM 0; wait; exit 0' TERM
i=0
while [ $i -lt 1000 ]; do sleep 1000 & i=$((i+1)); done
touch "$D/ready.$$"
wait`

// startLoad puts n (a multiple of 1,000) more processes on the machine
// for the life of b.
func startLoad(b *testing.B, n int) {
	b.Helper()
	pidMax, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		b.Fatal(err)
	}
	before := countProcs(b)
	if m, _ := strconv.Atoi(strings.TrimSpace(string(pidMax))); m-before < n+1000 {
		b.Skipf("pid_max %d leaves no room for %d more processes beside %d", m, n, before)
	}
	dir := b.TempDir()
	for range n / 1000 {
		c := exec.Command("sh", "-c", loadScript)
		c.Env = append(os.Environ(), "D="+dir)
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { stopLoad(b, c) })
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		ready, _ := filepath.Glob(filepath.Join(dir, "ready.*"))
		if len(ready) == n/1000 && countProcs(b) >= before+n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("load: %d of %d shells ready, %d processes, want ≥ %d", len(ready), n/1000, countProcs(b), before+n)
		}
	}
}

// stopLoad ends a load shell and its sleeps, by its process group if the
// shell does not finish in time.
func stopLoad(b *testing.B, c *exec.Cmd) {
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	unix.Kill(c.Process.Pid, unix.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		b.Errorf("load shell %d did not stop on SIGTERM; killing its group", c.Process.Pid)
		unix.Kill(-c.Process.Pid, unix.SIGKILL)
		<-done
	}
}

// countProcs returns the number of processes on the machine.
func countProcs(b *testing.B) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}
