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
// (`tmux kill-server`) through its socket, and a plain `timeout 10 true`
// for the machine's speed in the same run. Order rotates each round.
// Issue 13's targets: start ≤ 10 ms, stop ≤ 10 ms plus the member's own
// exit (sleep exits at SIGTERM at once).
//
//	go test ./bench/ -run '^$' -bench SessionStartStop -benchtime 30x
func BenchmarkSessionStartStop(b *testing.B) {
	bin, xdg, env := sessionBench(b)
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
	var start, stop, tstart, tstop, floor []time.Duration
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
	plain := func(int) { floor = append(floor, timed("timeout", "10", "true")) }
	runs := []func(int){viaTether, viaTmux, plain}
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
	b.ReportMetric(median(floor), "timeout-ms")
	b.ReportMetric(median(start)/median(tstart), "start-ratio")
	b.ReportMetric(median(stop)/median(tstop), "stop-ratio")
}
