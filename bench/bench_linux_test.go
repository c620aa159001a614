package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/watch"
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
	// Static, as README builds it: pflag imports net, which would link
	// libc and the dynamic loader (~1 ms per start, ~1.5 MB per process).
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
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
			tot, emp := stopTreeOf(b, m, 1000)
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

// BenchmarkLibraryRunAllocs reports the heap allocations of one
// contain.Command("true").Run() and of one exec.Command("true").Run():
// everything the process allocates meanwhile, its goroutines' included.
func BenchmarkLibraryRunAllocs(b *testing.B) {
	b.Run("contain", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if err := contain.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("exec", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if err := exec.Command("true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
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

// BenchmarkSupervisorRSS starts 1, 10 and 50 sessions of `sleep 1000`
// and reports the median resident (RSS) and proportional (PSS: shared
// pages divided among their users) memory of their supervisors.
func BenchmarkSupervisorRSS(b *testing.B) {
	bin := build(b, "../cmd/tether")
	for _, n := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			var rss, pss []time.Duration // KB, reusing median()
			for range b.N {
				r, p := supervisorsMemory(b, bin, n)
				rss, pss = append(rss, r...), append(pss, p...)
			}
			b.ReportMetric(median(rss)*float64(time.Millisecond)/1024, "rss-MB")
			b.ReportMetric(median(pss)*float64(time.Millisecond)/1024, "pss-MB")
		})
	}
}

func supervisorsMemory(b *testing.B, bin string, n int) (rss, pss []time.Duration) {
	xdg := b.TempDir()
	leakcheck.AwaitAtCleanup(b, watch.Env, filepath.Join(xdg, "tether")) // its watcher, before the dir goes
	os.Chmod(xdg, 0o700)
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+xdg)
	run := func(args ...string) string {
		c := exec.Command(bin, args...)
		c.Env = env
		out, err := c.Output()
		if err != nil {
			b.Fatalf("tether %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	defer run("stop", "--all", "--grace", "0")
	for range n {
		run("start", "--owner", "none", "--", "sleep", "1000")
	}
	time.Sleep(500 * time.Millisecond)
	var doc struct {
		Sessions []struct {
			Supervisor string `json:"supervisor"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(run("ls", "--json")), &doc); err != nil || len(doc.Sessions) != n {
		b.Fatalf("ls: %v, %d sessions", err, len(doc.Sessions))
	}
	for _, s := range doc.Sessions {
		pid := strings.Split(s.Supervisor, ":")[2]
		st, _ := os.ReadFile("/proc/" + pid + "/status")
		sm, _ := os.ReadFile("/proc/" + pid + "/smaps_rollup")
		rss = append(rss, time.Duration(kb(string(st), "VmRSS:")))
		pss = append(pss, time.Duration(kb(string(sm), "Pss:")))
	}
	return rss, pss
}

func kb(s, key string) int64 {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
