package bench

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/leakcheck"
	"golang.org/x/sys/unix"
)

// peer is a process supervisor measured beside tether. bench/setup.sh
// installs the missing ones from Debian packages.
type peer struct {
	name, label string
	// argv runs a command under the peer: the command's argv follows it.
	argv []string
	// stop is argv with the peer's own timeout of 300 ms; nil for peers
	// without one.
	stop []string
}

// peers are the supervisors tether is compared with, with the flags that
// give each its fullest cleanup short of being PID 1:
//   - tini -s registers as child subreaper (tini is otherwise meant to be
//     PID 1 and warns that it cannot reap orphans).
//   - catatonit needs no flag: not PID 1, it registers as subreaper itself,
//     and exits when its child does. -g would only widen the forwarding of
//     signals it receives to the child's process group.
//   - dumb-init in its default mode runs the child in a new session and,
//     when the child exits, sends SIGTERM to that session's process group;
//     --single-child would narrow both to the child alone.
//   - bwrap --unshare-pid puts the command in a PID namespace whose init is
//     bwrap's own; when the command exits that init exits and the kernel
//     kills the namespace. --die-with-parent does the same when bwrap
//     itself dies. --dev-bind / / keeps the host's filesystem.
var peers = []peer{
	{name: "timeout", label: "`timeout 10`", argv: []string{"timeout", "10"}, stop: []string{"timeout", "0.3"}},
	{name: "tini", label: "`tini -s`", argv: []string{"tini", "-s", "--"}},
	{name: "catatonit", label: "`catatonit`", argv: []string{"catatonit", "--"}},
	{name: "dumb-init", label: "`dumb-init`", argv: []string{"dumb-init"}},
	{name: "bwrap", label: "`bwrap --unshare-pid --die-with-parent`",
		argv: []string{"bwrap", "--unshare-pid", "--die-with-parent", "--dev-bind", "/", "/"}},
}

// systemdRunning reports whether a systemd instance manages this machine,
// as sd_booted(3) tells: /run/systemd/system exists.
func systemdRunning() bool {
	fi, err := os.Stat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

func peerSpread(d []time.Duration) (lo, hi float64) {
	if len(d) == 0 {
		return 0, 0
	}
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	return ms(slices.Min(d)), ms(slices.Max(d))
}

// BenchmarkPeersStartToExit times `tether run -- true` beside the same
// `true` under each peer, rotating which goes first: median, min and max in
// ms per tool, and tether's median as a ratio to each peer's. The issue's
// target is ≤ 1.0× timeout. A peer whose binary is missing is skipped, and
// `systemd-run --scope` is measured only where a systemd instance runs.
func BenchmarkPeersStartToExit(b *testing.B) {
	tether := build(b, "../cmd/tether")
	names := []string{"tether"}
	runs := [][]string{{tether, "run", "--", "true"}}
	all := slices.Clone(peers)
	if systemdRunning() {
		all = append(all, peer{name: "systemd-run", argv: []string{"systemd-run", "--scope", "--quiet"}})
	} else {
		b.Logf("systemd-run: skipped: no systemd instance (/run/systemd/system is absent; PID 1 is %s)", procComm(1))
	}
	for _, p := range all {
		if _, err := exec.LookPath(p.argv[0]); err != nil {
			b.Logf("%s: skipped: %v (bash bench/setup.sh installs it)", p.name, err)
			continue
		}
		names = append(names, p.name)
		runs = append(runs, append(slices.Clone(p.argv), "true"))
	}
	got := rotate(b, runs)
	for i, name := range names {
		lo, hi := peerSpread(got[i])
		b.ReportMetric(median(got[i]), name+"-ms")
		b.ReportMetric(lo, name+"-min-ms")
		b.ReportMetric(hi, name+"-max-ms")
		if i > 0 {
			b.ReportMetric(median(got[0])/median(got[i]), name+"-ratio")
		}
	}
}

func procComm(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

// leakMarkEnv names the variable that marks every process of one leak-table
// cell, so that its survivors are found wherever they were reparented,
// whatever session, process group or PID namespace they moved to.
const leakMarkEnv = "MARK"

const (
	// leakStopAfter is when an endless scenario is stopped: by the tool's own
	// timeout, else by SIGTERM to the tool.
	leakStopAfter = 300 * time.Millisecond
	// leakStopGuard bounds a stopped run after leakStopAfter; a tool still
	// running then is SIGKILLed and counted as hung. tether ends a fork
	// storm about 250 ms after its timeout (--grace 100ms, then
	// cgroup.kill, or the fallback's SIGKILL walk); the guard leaves it ten
	// times that. The storm forks about 1,000 processes a second here, and
	// goes on under a peer that cannot stop it until the guard: its survivors
	// grow with the guard, and pid_max is 32,768.
	leakStopGuard = 3 * time.Second
	// leakExitGuard bounds a run whose main exits by itself; tether's default
	// --grace is 10 s.
	leakExitGuard = 15 * time.Second
	// leakSettle is how long after the tool exits survivors are counted, so
	// that what it signalled on its way out has time to die.
	leakSettle = time.Second
)

// leakMaxPasses caps the passes of BenchmarkLeakTable whatever -benchtime
// asks (doc.go's 200x would take five hours).
const leakMaxPasses = 3

// leakTool is one row of the leak table.
type leakTool struct {
	peer
	// missing says why the tool cannot run here; its cells are n/a.
	missing string
}

// leakScenario is one column of the leak table: a tree made by `sh -c`.
type leakScenario struct {
	name, label string
	// script runs under every tool. $D is a directory of the cell's own.
	script string
	// timed replaces script under a tool with a timeout: the main then
	// waits, and the tool's timeout ends the run.
	timed string
	// endless scenarios never end by themselves: tools without a timeout
	// get SIGTERM after leakStopAfter.
	endless bool
}

// leakReady waits for the tree to signal that it is set up, so that the
// main exits only after its descendants have left its session: otherwise a
// tool that signals the main's process group as the main exits (dumb-init)
// could catch them before they leave it, by luck of scheduling.
const leakReady = `until [ -e "$D/r" ]; do sleep 0.01; done;`

const leakTermIgnorer = `setsid sh -c 'trap "" TERM; touch "$D/r"; sleep 1000' & ` + leakReady

// leakScenarios are the columns. "main exits early" is the exception to
// leakReady: its main exits as soon as setsid -f has forked, while the
// daemon may not have its session yet.
var leakScenarios = []leakScenario{
	{name: "child", label: "child", script: `sleep 1000 & exit 0`},
	{name: "setsid", label: "setsid", script: `setsid sh -c 'touch "$D/r"; exec sleep 1000' & ` + leakReady + ` exit 0`},
	{name: "double-fork", label: "double-fork", script: `(sleep 1000 &); exit 0`},
	{name: "term-ignoring", label: "TERM-ignoring", script: leakTermIgnorer + ` exit 0`, timed: leakTermIgnorer + ` wait`},
	{name: "tmux", label: "tmux server", script: `tmux -S "$D/sock" -f /dev/null new -d 'sleep 1000'`},
	{name: "main-exits-early", label: "main exits early", script: `setsid -f sleep 1000`},
	{name: "fork-storm", label: "fork storm", endless: true,
		script: `trap "" TERM; while :; do (sleep 1000 &); done`,
		timed:  `trap "" TERM; while :; do (sleep 1000 &); done`},
}

// leakTools lists the rows: tether's two mechanisms, the peers, and plain
// sh as the baseline.
func leakTools(tether string) []leakTool {
	run := func(extra ...string) peer {
		argv := append(append([]string{tether, "run", "-q"}, extra...), "--")
		stop := append(append([]string{tether, "run", "-q"}, extra...), "--timeout", "300ms", "--grace", "100ms", "--")
		return peer{argv: argv, stop: stop}
	}
	ts := []leakTool{{peer: run("--mechanism", "cgroup")}, {peer: run("--mechanism", "fallback")}}
	ts[0].name, ts[0].label = "tether", "`tether run`"
	ts[1].name, ts[1].label = "tether-fallback", "`tether run --mechanism fallback`"
	if p, err := cgroup.DefaultParent(); err != nil {
		ts[0].missing = fmt.Sprintf("no cgroup v2 parent: %v", err)
	} else if err := cgroup.CheckParent(p); err != nil {
		ts[0].missing = fmt.Sprintf("cgroup v2 parent %s unusable: %v", p, err)
	}
	for _, p := range peers {
		t := leakTool{peer: p}
		if _, err := exec.LookPath(p.argv[0]); err != nil {
			t.missing = err.Error()
		}
		ts = append(ts, t)
	}
	return append(ts, leakTool{peer: peer{name: "sh", label: "`sh -c` (baseline)"}})
}

// leakCell is the outcome of one tool × scenario run.
type leakCell struct {
	survivors int
	// hung: the tool had not exited by its guard and was SIGKILLed.
	hung bool
}

// BenchmarkLeakTable runs each scenario under each tool once per
// iteration and reports, as "<tool>/<scenario>-survivors", the most
// processes of the scenario's tree (not zombies) found alive 1 s after
// the tool exited, over the iterations. Every survivor is then SIGKILLed
// before the next cell. With TETHER_LEAK_TABLE set, it also writes the
// table there as markdown (a relative path is taken from bench/). Meant
// for -benchtime 1x: a pass takes about 90 s, most of it the fork storms
// of the peers that cannot stop them, so a larger b.N runs
// leakMaxPasses passes.
func BenchmarkLeakTable(b *testing.B) {
	tether := build(b, "../cmd/tether")
	tools := leakTools(tether)
	leakSubreaper(b)
	var needTmux string
	if _, err := exec.LookPath("tmux"); err != nil {
		needTmux = err.Error()
	}
	got := map[string]map[string]*leakCell{}
	for _, t := range tools {
		got[t.name] = map[string]*leakCell{}
		if t.missing != "" {
			b.Logf("%s: skipped: %s", t.name, t.missing)
		}
	}
	if needTmux != "" {
		b.Logf("tmux scenario: skipped: %s", needTmux)
	}
	passes := min(b.N, leakMaxPasses)
	if passes < b.N {
		b.Logf("%d passes, not b.N=%d: a pass takes about 90 s", passes, b.N)
	}
	for range passes {
		for _, s := range leakScenarios {
			for _, t := range tools {
				if t.missing != "" || (s.name == "tmux" && needTmux != "") {
					continue
				}
				c := runLeakCell(b, t, s)
				prev := got[t.name][s.name]
				if prev == nil {
					prev = &leakCell{}
					got[t.name][s.name] = prev
				}
				prev.survivors = max(prev.survivors, c.survivors)
				prev.hung = prev.hung || c.hung
			}
		}
	}
	for _, t := range tools {
		for _, s := range leakScenarios {
			if c := got[t.name][s.name]; c != nil {
				b.ReportMetric(float64(c.survivors), t.name+"/"+s.name+"-survivors")
			}
		}
	}
	if path := os.Getenv("TETHER_LEAK_TABLE"); path != "" {
		if err := os.WriteFile(path, []byte(leakMarkdown(tools, got, passes)), 0o644); err != nil {
			b.Errorf("TETHER_LEAK_TABLE: %v", err)
		}
	}
}

// runLeakCell runs scenario s under tool t, counts the survivors, and kills
// them.
func runLeakCell(b *testing.B, t leakTool, s leakScenario) leakCell {
	b.Helper()
	mark := newLeakMark()
	dir, err := os.MkdirTemp("", "leak-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)

	argv, script := t.argv, s.script
	if s.timed != "" && t.stop != nil {
		argv, script = t.stop, s.timed
	}
	argv = append(slices.Clone(argv), "sh", "-c", script)
	cmd := exec.Command(argv[0], argv[1:]...)
	// No pipes: a survivor holding one would keep Wait from returning.
	cmd.Env = append(os.Environ(), leakMarkEnv+"="+mark, "D="+dir)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatalf("%s/%s: %v", t.name, s.name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()

	var term <-chan time.Time
	if s.endless && t.stop == nil {
		term = time.After(leakStopAfter)
	}
	guard := time.After(leakExitGuard)
	if s.endless || (s.timed != "" && t.stop != nil) {
		guard = time.After(leakStopAfter + leakStopGuard)
	}
	var c leakCell
wait:
	for {
		select {
		case <-done:
			break wait
		case <-term:
			cmd.Process.Signal(unix.SIGTERM)
		case <-guard:
			c.hung = true
			cmd.Process.Kill()
			<-done
			break wait
		}
	}
	took := time.Since(t0)
	time.Sleep(leakSettle)
	c.survivors = len(leakcheck.Find(leakMarkEnv, mark))
	if n := killLeakMark(mark); n > 0 {
		b.Errorf("%s/%s: %d processes survived SIGKILL for 30 s", t.name, s.name, n)
	}
	var how string
	if c.hung {
		how = " (the tool hung and was SIGKILLed)"
	}
	b.Logf("%s/%s: %d survivors; the tool ran %v%s", t.name, s.name, c.survivors, took.Round(time.Millisecond), how)
	return c
}

func newLeakMark() string {
	var r [8]byte
	rand.Read(r[:])
	return hex.EncodeToString(r[:])
}

// killLeakMark SIGKILLs the live processes carrying mark until none is
// left: a fork storm forks again between one pass and the next, so it
// takes several. It returns how many remain after 30 s (0 normally).
func killLeakMark(mark string) int {
	deadline := time.Now().Add(30 * time.Second)
	for {
		procs := leakcheck.Find(leakMarkEnv, mark)
		if len(procs) == 0 || time.Now().After(deadline) {
			drainLeakOrphans()
			return len(procs)
		}
		for pid := range procs {
			unix.Kill(pid, unix.SIGKILL)
		}
		reapLeakOrphans()
		time.Sleep(10 * time.Millisecond)
	}
}

// leakSubreaper makes this process the child subreaper while the leak
// table runs, so that the orphans of the cells, thousands after a fork
// storm, are reparented here and reaped at once. Left to init, they wait
// as zombies: this machine's init reaps about 500 a second, and the
// backlog of a few storms would come near pid_max (32,768). The cells'
// own survivors are the same either way: what counts is that they live.
// (contain, used in-process by BenchmarkStop1000, leaves the flag set;
// then there is nothing to restore.)
func leakSubreaper(b *testing.B) {
	var was int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&was)), 0, 0, 0); err != nil {
		b.Skipf("prctl PR_GET_CHILD_SUBREAPER: %v", err)
	}
	if was != 0 {
		return
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		b.Skipf("prctl PR_SET_CHILD_SUBREAPER: %v", err)
	}
	b.Cleanup(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

// reapLeakOrphans reaps the zombies among this process's children. They
// are all orphans of cells: each cell's exec.Cmd has been waited for when
// this runs, and nothing else in the process has children then.
func reapLeakOrphans() {
	for {
		if pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil); pid <= 0 || err != nil {
			return
		}
	}
}

// drainLeakOrphans reaps until this process has no children left (the
// last ones SIGKILLed may still be exiting), for at most a second.
func drainLeakOrphans() {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
		if err != nil {
			return // ECHILD: none left
		}
		if pid == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// leakMarkdown renders the table for BENCHMARKS.md.
func leakMarkdown(tools []leakTool, got map[string]map[string]*leakCell, n int) string {
	var w strings.Builder
	var u unix.Utsname
	unix.Uname(&u)
	fmt.Fprintf(&w, "Processes of the tree alive 1 s after the run ended (the most over %d pass(es); Linux %s).\n\n",
		n, unix.ByteSliceToString(u.Release[:]))
	w.WriteString("| tool |")
	for _, s := range leakScenarios {
		w.WriteString(" " + s.label + " |")
	}
	w.WriteString("\n|---|")
	for range leakScenarios {
		w.WriteString("---:|")
	}
	w.WriteString("\n")
	var hung, missing bool
	for _, t := range tools {
		w.WriteString("| " + t.label + " |")
		for _, s := range leakScenarios {
			c := got[t.name][s.name]
			switch {
			case c == nil:
				w.WriteString(" n/a |")
				missing = true
			case c.hung:
				fmt.Fprintf(&w, " %d ‡ |", c.survivors)
				hung = true
			default:
				fmt.Fprintf(&w, " %d |", c.survivors)
			}
		}
		w.WriteString("\n")
	}
	w.WriteString("\nThe run ends when the main (`sh -c`) exits, except: TERM-ignoring runs under " +
		"`tether run --timeout 300ms --grace 100ms` and `timeout 0.3`, with a main that waits; " +
		"fork storms (`trap \"\" TERM` in the forking shell) under the same timeouts, and under " +
		"the other tools end by SIGTERM to the tool after 300 ms.\n")
	if hung {
		fmt.Fprintf(&w, "\n‡ The tool had not exited %v after the stop: its SIGTERM (passed on, if at all, "+
			"to the main or its process group) reached only shells that ignore it, and it waits for the main. "+
			"It was SIGKILLed; the storm's shell outlived it (except under the baseline, where the tool is that shell) "+
			"and forked on until the count, 1 s later.\n", leakStopGuard)
	}
	if missing {
		w.WriteString("\nn/a: the tool (or tmux) is not installed here; `bash bench/setup.sh` installs the peers.\n")
	}
	return w.String()
}
