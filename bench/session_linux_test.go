package bench

import (
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkSessionStartStop measures `tether start` until it returns (the
// command running, its record written) and `tether stop` of that idle
// one-process session until it returns (the member stopped, the stop
// confirmed), beside a tmux server's start (`tmux new -d`) and stop
// (`tmux kill-server`) through its socket, gostart's start of the same
// command (testdata/gostart: the Go floor of a start whose supervisor is
// its fresh child, with no cgroup, record or log) and a plain `timeout 10
// true` for the machine's speed in the same run. Order rotates each round.
// Issue 13's targets: start ≤ 10 ms, stop ≤ 10 ms plus the member's own
// exit (sleep exits at SIGTERM at once); issue 30's: start ≤ 2.6× timeout.
//
//	go test ./bench/ -run '^$' -bench SessionStartStop -benchtime 30x
func BenchmarkSessionStartStop(b *testing.B) {
	bin, xdg, env := sessionBench(b)
	gostart := build(b, "./testdata/gostart")
	timed := func(argv ...string) time.Duration {
		c := exec.Command(argv[0], argv[1:]...)
		c.Env = env
		t0 := time.Now()
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%v: %v\n%s", argv, err, out)
		}
		return time.Since(t0)
	}
	defer exec.Command(bin, "stop", "--all", "--grace", "0").Run()
	var start, stop, tstart, tstop, gstart, floor []time.Duration
	viaTether := func(i int) {
		name := fmt.Sprintf("s%d", i)
		start = append(start, timed(bin, "start", "-q", "--name", name, "--owner", "none", "--", "sleep", "1000"))
		stop = append(stop, timed(bin, "stop", name))
	}
	viaTmux := func(i int) {
		sock := fmt.Sprintf("%s/tmux-%d.sock", xdg, i)
		tstart = append(tstart, timed("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "sleep 1000"))
		tstop = append(tstop, timed("tmux", "-S", sock, "kill-server"))
	}
	viaFloor := func(i int) {
		name := fmt.Sprintf("g%d", i)
		gstart = append(gstart, timed(gostart, "start", "--name", name, "--", "sleep", "1000"))
		timed(gostart, "stop", name)
	}
	plain := func(int) { floor = append(floor, timed("timeout", "10", "true")) }
	runs := []func(int){viaTether, viaTmux, viaFloor, plain}
	b.ResetTimer()
	for i := range b.N {
		for j := range runs {
			runs[(i+j)%len(runs)](i)
		}
	}
	b.StopTimer()
	b.ReportMetric(median(start), "start-ms")
	b.ReportMetric(median(stop), "stop-ms")
	b.ReportMetric(median(tstart), "tmux-new-ms")
	b.ReportMetric(median(tstop), "tmux-kill-ms")
	b.ReportMetric(median(gstart), "gostart-ms")
	b.ReportMetric(median(floor), "timeout-ms")
	b.ReportMetric(median(start)/median(floor), "start/timeout")
	b.ReportMetric(median(gstart)/median(floor), "gostart/timeout")
	b.ReportMetric(median(start)/median(tstart), "start-ratio")
	b.ReportMetric(median(stop)/median(tstop), "stop-ratio")
}
