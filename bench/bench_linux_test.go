package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/receipt"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

func median(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2]) / float64(time.Millisecond)
}

// build builds the Go command in pkg (relative to this directory) once
// per benchmark.
func build(b *testing.B, pkg string) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		b.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func timeRun(b *testing.B, argv ...string) time.Duration {
	t0 := time.Now()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		b.Fatalf("%v: %v\n%s", argv, err, out)
	}
	return time.Since(t0)
}

// rotate times each command b.N times, rotating which goes first in each
// round so that no command always runs on a warmer machine.
func rotate(b *testing.B, runs [][]string) [][]time.Duration {
	got := make([][]time.Duration, len(runs))
	b.ResetTimer()
	for i := range b.N {
		for j := range runs {
			k := (i + j) % len(runs)
			got[k] = append(got[k], timeRun(b, runs[k]...))
		}
	}
	return got
}

// BenchmarkStartToExit compares `tether run -- true` with
// `timeout 10 true` (the target peer) and with goexec, the smallest Go
// wrapper (the floor for any Go binary), rotating which goes first.
func BenchmarkStartToExit(b *testing.B) {
	tether := build(b, "../cmd/tether")
	goexec := build(b, "./testdata/goexec")
	runs := [][]string{
		{tether, "run", "--", "true"},
		{"timeout", "10", "true"},
		{goexec, "true"},
	}
	got := rotate(b, runs)
	b.ReportMetric(median(got[0]), "tether-ms")
	b.ReportMetric(median(got[1]), "timeout-ms")
	b.ReportMetric(median(got[2]), "goexec-ms")
	b.ReportMetric(median(got[0])/median(got[1]), "ratio")
	b.ReportMetric(median(got[2])/median(got[1]), "goexec-ratio")
}

// tree1000 starts 999 members besides the main shell: a third setsid, a
// third double-forked, a third plain children; the second half ignore
// SIGTERM. It touches $D/ready when all exist.
const tree1000 = `i=0
while [ $i -lt 333 ]; do
  [ $i -eq 166 ] && trap "" TERM
  setsid sleep 1000 & (sleep 1000 &); sleep 1000 &
  i=$((i+1))
done
touch "$D/ready"
wait`

// stopTree starts the tree with mech, stops it with no grace, and returns
// the time from the start of the kill phase to confirmed empty and reaped,
// and the part of it spent before the group was seen empty.
func stopTree(b *testing.B, mech receipt.Mechanism) (total, empty time.Duration) {
	b.Helper()
	dir := b.TempDir()
	c := contain.Command("sh", "-c", tree1000)
	c.Env = append(os.Environ(), "D="+dir)
	c.Mechanism = mech
	c.Grace = -1
	c.AdoptOrphans = true
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Stop(contain.ReasonRequest)
	c.Wait()
	r := c.Receipt()
	if !r.StopConfirmed || r.Evidence.MembersSeen < 1000 {
		b.Fatalf("%s: stop_confirmed %t, members %d (want ≥1000); steps %+v", mech, r.StopConfirmed, r.Evidence.MembersSeen, r.Stop.Steps)
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

// BenchmarkStop1000 measures stopping 1,000 processes from the start of the
// kill phase to confirmed empty and reaped: cgroup.kill against the
// fallback's walk-and-SIGKILL, alternating.
func BenchmarkStop1000(b *testing.B) {
	mechs := []receipt.Mechanism{receipt.MechanismCgroup, receipt.MechanismFallback}
	if p, err := cgroup.DefaultParent(); err != nil || cgroup.CheckParent(p) != nil {
		b.Skipf("no writable cgroup v2 parent: %v", err)
	}
	got := map[receipt.Mechanism][]time.Duration{}
	empty := map[receipt.Mechanism][]time.Duration{}
	for i := range b.N {
		for j := range mechs {
			m := mechs[(i+j)%2]
			tot, emp := stopTree(b, m)
			got[m] = append(got[m], tot)
			empty[m] = append(empty[m], emp)
		}
	}
	for _, m := range mechs {
		b.ReportMetric(median(got[m]), string(m)+"-ms")
		b.ReportMetric(median(empty[m]), string(m)+"-empty-ms")
	}
	b.ReportMetric(median(got[receipt.MechanismCgroup])/median(got[receipt.MechanismFallback]), "ratio")
}

// BenchmarkLibraryRunTrue compares contain.Command("true").Run() — leaf,
// clone into it, wait, stop protocol, reap, rmdir, receipt — with
// exec.Command("true").Run() inside one warm process, alternating: the cost
// a Go program pays for containment, without any binary's start-up.
func BenchmarkLibraryRunTrue(b *testing.B) {
	var lib, plain []time.Duration
	for i := range b.N {
		for j := range 2 {
			t0 := time.Now()
			if (i+j)%2 == 0 {
				c := contain.Command("true")
				if err := c.Run(); err != nil || !c.Receipt().StopConfirmed {
					b.Fatalf("contain run: %v", err)
				}
				lib = append(lib, time.Since(t0))
			} else {
				if err := exec.Command("true").Run(); err != nil {
					b.Fatal(err)
				}
				plain = append(plain, time.Since(t0))
			}
		}
	}
	b.ReportMetric(median(lib), "contain-ms")
	b.ReportMetric(median(plain), "exec-ms")
	b.ReportMetric(median(lib)/median(plain), "ratio")
}

// BenchmarkLimitsCost compares `tether run -- true` with the same run
// under a memory, pids and cpu budget (v1 leaves on hybrid hosts),
// alternating: what a budget adds to a start.
func BenchmarkLimitsCost(b *testing.B) {
	tether := build(b, "../cmd/tether")
	runs := [][]string{
		{tether, "run", "-q", "--", "true"},
		{tether, "run", "-q", "--memory", "1G", "--pids", "100", "--cpus", "1", "--", "true"},
	}
	got := rotate(b, runs)
	b.ReportMetric(median(got[0]), "plain-ms")
	b.ReportMetric(median(got[1]), "limited-ms")
	b.ReportMetric(median(got[1])/median(got[0]), "ratio")
}
