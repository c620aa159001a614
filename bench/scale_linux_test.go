package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// minMedMax returns the minimum, median and maximum of d in milliseconds.
func minMedMax(d []time.Duration) (lo, med, hi float64) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	return ms(slices.Min(d)), median(d), ms(slices.Max(d))
}

// reportSpread reports the median of d as name-ms and its extremes as
// name-min-ms and name-max-ms, and returns the median.
func reportSpread(b *testing.B, name string, d []time.Duration) float64 {
	lo, med, hi := minMedMax(d)
	b.ReportMetric(med, name+"-ms")
	b.ReportMetric(lo, name+"-min-ms")
	b.ReportMetric(hi, name+"-max-ms")
	return med
}

// treeScript makes a tree of n processes, the main shell included:
// (n-1)/3 rounds of a setsid, a double-forked and a plain child, the
// second half of them ignoring SIGTERM; it touches $D/ready when all
// exist. Sizes of 3k+1 are exact.
func treeScript(n int) string {
	rounds := (n - 1) / 3
	return fmt.Sprintf(`i=0
while [ $i -lt %d ]; do
  [ $i -eq %d ] && trap "" TERM
  setsid sleep 1000 & (sleep 1000 &); sleep 1000 &
  i=$((i+1))
done
touch "$D/ready"
wait`, rounds, rounds/2)
}

// treeSize is how many processes treeScript(n) makes: n for sizes of
// 3k+1.
func treeSize(n int) int { return 3*((n-1)/3) + 1 }

// settleTree is how long a tree lives after it is ready before it is
// stopped. The kernel defers a cgroup.events notification that comes
// within CGROUP_FILE_NOTIFY_MIN_INTV (DIV_ROUND_UP(HZ, 100) jiffies: 12 ms
// at HZ=250) of the previous one, here the leaf's populated 1 at the
// tree's birth. A tree of 10 is ready in ~3 ms; stopped then, its
// populated 0 waits for that timer (~7 ms of the figure), not for its
// members. Settled, the figures are those of a tree that has run a while,
// as stopped trees usually have.
const settleTree = 25 * time.Millisecond

// startTree starts a tree of n processes (treeScript) with mech and
// grace, and returns once every member exists and the tree has settled.
func startTree(b *testing.B, mech receipt.Mechanism, n int, grace time.Duration) *contain.Cmd {
	b.Helper()
	dir := b.TempDir()
	c := contain.Command("sh", "-c", treeScript(n))
	c.Env = append(os.Environ(), "D="+dir)
	c.Mechanism = mech
	c.Grace = grace
	c.AdoptOrphans = true
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(settleTree)
	return c
}

// stopTreeOf starts a tree of n processes with mech, stops it with no
// grace, and returns the time from the start of the kill phase to
// confirmed empty and reaped, and the part of it spent before the group
// was seen empty.
func stopTreeOf(b *testing.B, mech receipt.Mechanism, n int) (total, empty time.Duration) {
	b.Helper()
	c := startTree(b, mech, n, -1)
	c.BeginStop(contain.ReasonRequest)
	c.Wait()
	r := c.Receipt()
	want := treeSize(n)
	if !r.StopConfirmed || r.Evidence.MembersSeen < want {
		b.Fatalf("%s: stop_confirmed %t, members %d (want ≥%d); steps %+v", mech, r.StopConfirmed, r.Evidence.MembersSeen, want, r.Stop.Steps)
	}
	var kill, reap time.Time
	for _, s := range r.Stop.Steps {
		switch s.Name {
		case "kill":
			kill = s.At
		case "reap":
			reap = s.At
		}
	}
	if kill.IsZero() || reap.IsZero() {
		b.Fatalf("%s: no kill or reap step in %+v", mech, r.Stop.Steps)
	}
	return reap.Sub(kill), r.Evidence.EmptyAt.Sub(kill)
}

// BenchmarkStopTree measures stopping trees of 10, 100 and 1,000
// processes (setsid, double-forked and TERM-ignoring members, as in
// BenchmarkStop1000) from the start of the kill phase to confirmed empty
// and reaped: cgroup.kill against the fallback's walk-and-SIGKILL,
// alternating. The target is ≤ 50 ms at 1,000.
//
// Per size, in ms: MECH-ms is the median (with -min-ms and -max-ms),
// MECH-empty-ms the part before the group was seen empty, and
// MECH-us-per-proc the median divided by the size, which shows how the
// cost grows; procs is the count in /proc before a round, which the
// fallback's walks read whole.
func BenchmarkStopTree(b *testing.B) {
	if p, err := cgroup.DefaultParent(); err != nil || cgroup.CheckParent(p) != nil {
		b.Skipf("no writable cgroup v2 parent: %v", err)
	}
	mechs := []receipt.Mechanism{receipt.MechanismCgroup, receipt.MechanismFallback}
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			got := map[receipt.Mechanism][]time.Duration{}
			empty := map[receipt.Mechanism][]time.Duration{}
			var procs []time.Duration // a count, reusing median()
			for i := range b.N {
				procs = append(procs, time.Duration(countProcs(b))*time.Millisecond)
				for j := range mechs {
					m := mechs[(i+j)%2]
					tot, emp := stopTreeOf(b, m, n)
					got[m] = append(got[m], tot)
					empty[m] = append(empty[m], emp)
				}
			}
			for _, m := range mechs {
				med := reportSpread(b, string(m), got[m])
				b.ReportMetric(median(empty[m]), string(m)+"-empty-ms")
				b.ReportMetric(med*1000/float64(n), string(m)+"-us-per-proc")
			}
			b.ReportMetric(median(got[receipt.MechanismCgroup])/median(got[receipt.MechanismFallback]), "ratio")
			b.ReportMetric(median(procs), "procs")
		})
	}
}

// fleet is a private state dir holding live sessions of `sleep 1000`,
// named ls-0000, ls-0001, ..., each with its supervisor.
type fleet struct {
	bin, xdg string
	env      []string
	n        int
}

// tether runs the binary on the fleet's state dir and returns its stdout.
func (f *fleet) tether(args ...string) ([]byte, error) {
	c := exec.Command(f.bin, args...)
	c.Env = f.env
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		return out, fmt.Errorf("tether %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// grow starts sessions until the fleet has n, with a few `tether start`
// at a time. --no-reap: the quick pass before each start reads every live
// record, which would make the setup quadratic in n.
func (f *fleet) grow(b *testing.B, n int) {
	b.Helper()
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1) // not wg.Go: Go 1.25, above tether's go line
		go func() {
			defer wg.Done()
			for i := range next {
				if _, err := f.tether("start", "--no-reap", "--owner", "none", "--name", fmt.Sprintf("ls-%04d", i), "--", "sleep", "1000"); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := f.n; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	f.n = max(f.n, n)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	// Every session is a supervisor and its sleep, both carrying the
	// fleet's XDG_RUNTIME_DIR.
	if procs := leakcheck.Find("XDG_RUNTIME_DIR", f.xdg); len(procs) != 2*n {
		b.Fatalf("%d processes in the fleet, want %d (a supervisor and a sleep per session)", len(procs), 2*n)
	}
}

// stop stops every session, then fails b if any of the fleet's processes
// survives.
func (f *fleet) stop(b *testing.B) {
	t0 := time.Now()
	if _, err := f.tether("stop", "--all", "--grace", "0"); err != nil {
		b.Error(err)
	}
	b.Logf("stopped %d sessions in %s", f.n, time.Since(t0).Round(time.Millisecond))
	var procs map[int]string
	for range 100 {
		if procs = leakcheck.Find("XDG_RUNTIME_DIR", f.xdg); len(procs) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Errorf("%d processes survived `tether stop --all`: %v", len(procs), procs)
}

// checkTable fails b unless out is the header and n rows of running
// sessions.
func checkTable(b *testing.B, out []byte, n int) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	running := 0
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) > 1 && f[1] == registry.StateRunning {
			running++
		}
	}
	if len(lines) != n+1 || running != n {
		b.Fatalf("tether ls: %d lines, %d running, want %d sessions:\n%s", len(lines), running, n, out)
	}
}

// checkStatuses fails b unless ss are n running, supervised sessions.
func checkStatuses(b *testing.B, what string, ss []session.Status, n int) {
	ok := 0
	for _, s := range ss {
		if s.State == registry.StateRunning && s.Supervised {
			ok++
		}
	}
	if len(ss) != n || ok != n {
		b.Fatalf("%s: %d sessions, %d running and supervised, want %d", what, len(ss), ok, n)
	}
}

// BenchmarkLs times `tether ls` over 10, 100 and 1,000 live sessions
// (each a supervisor and `sleep 1000`; the sessions of a size stay for
// the next one). The target is ≤ 100 ms at 1,000.
//
// Per size, in ms (median, with -min-ms and -max-ms): ls is `tether ls`
// and json `tether ls --json`, each as a whole process; lib is what they
// do inside this process (store.Open, ListLive, StatusOf for each), of
// which lib-list is the reading of the records and lib-status the
// StatusOf calls; floor is `tether ls` on an empty state dir. The
// -per-100 metrics are the medians above the floor (lib: the median) per
// 100 sessions, which shows how the cost grows; procs is the count in
// /proc at the end (the fleet's included).
func BenchmarkLs(b *testing.B) {
	bin := build(b, "../cmd/tether")
	xdg := runtimeDir(b, b)
	f := &fleet{bin: bin, xdg: xdg, env: append(os.Environ(), "XDG_RUNTIME_DIR="+xdg)}
	b.Cleanup(func() { f.stop(b) })
	none := &fleet{bin: bin, env: append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir(b, b))}
	dir := filepath.Join(xdg, "tether")
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			t0 := time.Now()
			f.grow(b, n)
			b.Logf("%d sessions up in %s", n, time.Since(t0).Round(time.Millisecond))
			var list, status []time.Duration
			runs := []func() time.Duration{
				func() time.Duration { return timeLs(b, f, n, "ls") },
				func() time.Duration { return timeLs(b, f, n, "ls", "--json") },
				func() time.Duration {
					t0 := time.Now()
					reg, err := store.Open(dir)
					if err != nil {
						b.Fatal(err)
					}
					recs, errs := reg.ListLive()
					t1 := time.Now()
					ss := make([]session.Status, 0, len(recs))
					for _, r := range recs {
						ss = append(ss, session.StatusOf(r))
					}
					t2 := time.Now()
					if len(errs) > 0 {
						b.Fatalf("ListLive: %v", errs)
					}
					checkStatuses(b, "StatusOf", ss, n)
					list, status = append(list, t1.Sub(t0)), append(status, t2.Sub(t1))
					return t2.Sub(t0)
				},
				func() time.Duration { return timeLs(b, none, 0, "ls") },
			}
			got := make([][]time.Duration, len(runs))
			b.ResetTimer()
			for i := range b.N {
				for j := range runs {
					k := (i + j) % len(runs)
					got[k] = append(got[k], runs[k]())
				}
			}
			b.StopTimer()
			ls := reportSpread(b, "ls", got[0])
			js := reportSpread(b, "json", got[1])
			lib := reportSpread(b, "lib", got[2])
			floor := reportSpread(b, "floor", got[3])
			b.ReportMetric(median(list), "lib-list-ms")
			b.ReportMetric(median(status), "lib-status-ms")
			per100 := float64(n) / 100
			b.ReportMetric((ls-floor)/per100, "ls-ms-per-100")
			b.ReportMetric((js-floor)/per100, "json-ms-per-100")
			b.ReportMetric(lib/per100, "lib-ms-per-100")
			b.ReportMetric(float64(countProcs(b)), "procs")
		})
	}
}

// timeLs times `tether ARGS...` on f's state dir, then checks untimed
// that it listed n running sessions.
func timeLs(b *testing.B, f *fleet, n int, args ...string) time.Duration {
	b.Helper()
	t0 := time.Now()
	out, err := f.tether(args...)
	d := time.Since(t0)
	if err != nil {
		b.Fatal(err)
	}
	if !slices.Contains(args, "--json") {
		checkTable(b, out, n)
		return d
	}
	var doc struct {
		Sessions []session.Status `json:"sessions"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		b.Fatalf("tether ls --json: %v", err)
	}
	checkStatuses(b, "tether ls --json", doc.Sessions, n)
	return d
}

// BenchmarkTermFanout1000 measures the first step of a stop of 1,000
// processes (the tree of BenchmarkStop1000): from the stop request to
// the stop signal sent to every member found, each proven through a
// pidfd first. cgroup reads the members from cgroup.procs; the fallback
// walks /proc. The target is ≤ 20 ms for the fallback.
//
// Its peer, bare, is the floor any tool pays on this machine: the same
// tree in a leaf, its cgroup.procs read once and SIGTERM and SIGCONT sent
// to every pid with kill(2), nothing opened or proven. Half of the tree
// dies of SIGTERM, and each of those deaths is work for the same two
// cores while the signals go out. The three run in turns.
//
//	go test ./bench/ -run '^$' -bench TermFanout1000 -benchtime 10x
func BenchmarkTermFanout1000(b *testing.B) {
	kinds := []string{string(receipt.MechanismCgroup), string(receipt.MechanismFallback), "bare"}
	if p, err := cgroup.DefaultParent(); err != nil || cgroup.CheckParent(p) != nil {
		b.Logf("cgroup mechanism and the bare peer not measured: no writable cgroup v2 parent: %v", err)
		kinds = kinds[1:2]
	}
	got := map[string][]time.Duration{}
	for i := range b.N {
		for j := range kinds {
			k := kinds[(i+j)%len(kinds)]
			if k == "bare" {
				got[k] = append(got[k], bareFanoutOf(b, 1000))
			} else {
				got[k] = append(got[k], termFanoutOf(b, receipt.Mechanism(k), 1000))
			}
		}
	}
	meds := map[string]float64{}
	for _, k := range kinds {
		meds[k] = reportSpread(b, k+"-term", got[k])
	}
	if bare := meds["bare"]; bare > 0 {
		for _, k := range kinds[:2] {
			b.ReportMetric(meds[k]/bare, k+"-ratio")
		}
	}
}

// bareFanoutOf starts a tree of n processes in a leaf and sends SIGTERM
// and SIGCONT to each pid its cgroup.procs lists, by pid, as fast as it
// can; it returns the time from the read to the last signal. contain
// then stops what is left. (By pid is safe here only because every
// process is this benchmark's own, in a leaf it holds, for milliseconds.)
func bareFanoutOf(b *testing.B, n int) time.Duration {
	b.Helper()
	c := startTree(b, receipt.MechanismCgroup, n, time.Millisecond)
	procs := filepath.Join(c.Receipt().Cgroup.Path, "cgroup.procs")
	t0 := time.Now()
	data, err := os.ReadFile(procs)
	if err != nil {
		b.Fatal(err)
	}
	sent := 0
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			b.Fatalf("%s: %q", procs, f)
		}
		if syscall.Kill(pid, syscall.SIGTERM) == nil {
			sent++
		}
		syscall.Kill(pid, syscall.SIGCONT)
	}
	d := time.Since(t0)
	c.BeginStop(contain.ReasonRequest)
	c.Wait()
	if r := c.Receipt(); !r.StopConfirmed || sent < treeSize(n) {
		b.Fatalf("bare: %d signalled (want ≥%d), then stop_confirmed %t; steps %+v", sent, treeSize(n), r.StopConfirmed, r.Stop.Steps)
	}
	return d
}

// termFanoutOf starts a tree of n processes with mech and stops it with
// a short grace; it returns the time from the stop request to the end of
// the term step.
func termFanoutOf(b *testing.B, mech receipt.Mechanism, n int) time.Duration {
	b.Helper()
	c := startTree(b, mech, n, time.Millisecond)
	t0 := time.Now()
	c.BeginStop(contain.ReasonRequest)
	c.Wait()
	r := c.Receipt()
	want := treeSize(n)
	if !r.StopConfirmed || r.Evidence.Signalled < want {
		b.Fatalf("%s: stop_confirmed %t, signalled %d (want ≥%d); steps %+v", mech, r.StopConfirmed, r.Evidence.Signalled, want, r.Stop.Steps)
	}
	for _, s := range r.Stop.Steps {
		if s.Name == "term" {
			return s.At.Sub(t0)
		}
	}
	b.Fatalf("%s: no term step in %+v", mech, r.Stop.Steps)
	return 0
}
