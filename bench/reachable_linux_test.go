package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/watch"
)

// sessionBench is what the session benchmarks share: it skips without
// tmux, builds tether, and gives it a private state dir; it returns the
// binary, that dir, and the environment naming it.
func sessionBench(b *testing.B) (bin, xdg string, env []string) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skipf("tmux not installed: %v", err)
	}
	bin = build(b, "../cmd/tether")
	xdg = b.TempDir()
	leakcheck.AwaitAtCleanup(b, watch.Env, filepath.Join(xdg, "tether")) // its watcher, before the dir goes
	os.Chmod(xdg, 0o700)
	return bin, xdg, append(os.Environ(), "XDG_RUNTIME_DIR="+xdg)
}

// BenchmarkSessionReachable measures a daemon's start-to-reachable time:
// from the start command until a client gets an answer from it. The
// daemon is a tmux server. Beside it, the same server started by tmux
// itself and reached by its socket (the floor: what tether adds is its
// supervisor, leaf and record before, and tether exec's round trip
// through the supervisor after). Run order rotates each round.
//
//	go test ./bench/ -run '^$' -bench SessionReachable -benchtime 30x
func BenchmarkSessionReachable(b *testing.B) {
	bin, xdg, env := sessionBench(b)
	run := func(argv ...string) error {
		c := exec.Command(argv[0], argv[1:]...)
		c.Env = env
		return c.Run()
	}
	until := func(argv ...string) {
		for t0 := time.Now(); run(argv...) != nil; time.Sleep(time.Millisecond) {
			if time.Since(t0) > 10*time.Second {
				b.Fatalf("%v: not reachable after 10s", argv)
			}
		}
	}
	direct := func(i int) time.Duration {
		sock := filepath.Join(xdg, fmt.Sprintf("direct-%d.sock", i))
		t0 := time.Now()
		if err := run("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "sleep 1000"); err != nil {
			b.Fatal(err)
		}
		until("tmux", "-S", sock, "ls")
		d := time.Since(t0)
		run("tmux", "-S", sock, "kill-server")
		return d
	}
	viaTether := func(i int) time.Duration {
		name := fmt.Sprintf("r%d", i)
		t0 := time.Now()
		if err := run(bin, "start", "-q", "--name", name, "--profile", "tmux", "--until", "empty", "--",
			"tmux", "-f", "/dev/null", "new-session", "-d", "sleep 1000"); err != nil {
			b.Fatal(err)
		}
		until(bin, "exec", name, "--", "tmux", "ls")
		d := time.Since(t0)
		run(bin, "stop", "--grace", "0", name)
		return d
	}
	defer run(bin, "stop", "--all", "--grace", "0")
	runs := []func(int) time.Duration{direct, viaTether}
	got := make([][]time.Duration, len(runs))
	b.ResetTimer()
	for i := range b.N {
		for j := range runs {
			k := (i + j) % len(runs)
			got[k] = append(got[k], runs[k](i))
		}
	}
	b.StopTimer()
	b.ReportMetric(median(got[0]), "tmux-direct-ms")
	b.ReportMetric(median(got[1]), "tether-start+exec-ms")
	b.ReportMetric(median(got[1])/median(got[0]), "ratio")
}
