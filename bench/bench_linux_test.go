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

// buildTether builds the tether binary once per benchmark.
func buildTether(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "tether")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/tether").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
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

// BenchmarkStartToExit compares `tether run -- true` with
// `timeout 10 true`, alternating which goes first.
func BenchmarkStartToExit(b *testing.B) {
	bin := buildTether(b)
	var tether, peer []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			tether = append(tether, timeRun(b, bin, "run", "--", "true"))
			peer = append(peer, timeRun(b, "timeout", "10", "true"))
		} else {
			peer = append(peer, timeRun(b, "timeout", "10", "true"))
			tether = append(tether, timeRun(b, bin, "run", "--", "true"))
		}
	}
	b.ReportMetric(median(tether), "tether-ms")
	b.ReportMetric(median(peer), "timeout-ms")
	b.ReportMetric(median(tether)/median(peer), "ratio")
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
