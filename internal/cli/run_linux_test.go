package cli_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
)

// mechanisms are the containments every ending is tested under.
var mechanisms = []string{"cgroup", "fallback"}

// forMechanisms runs f as a subtest per mechanism, skipping the cgroup one
// where this user may not create leaves.
func forMechanisms(t *testing.T, f func(t *testing.T, mech string)) {
	for _, mech := range mechanisms {
		t.Run(mech, func(t *testing.T) {
			t.Parallel()
			if mech == "cgroup" {
				cgroupParent(t)
			}
			f(t, mech)
		})
	}
}

// checkStopped asserts what every run must end with: a confirmed stop by
// the mechanism asked for, its leaf removed, and no process of t alive.
func checkStopped(t *testing.T, r *receipt.Receipt, mech string) {
	t.Helper()
	if !r.StopConfirmed {
		t.Errorf("tether run: receipt stop_confirmed = false, want true; evidence %+v", r.Evidence)
	}
	if string(r.Mechanism) != mech {
		t.Errorf("tether run --mechanism %s: receipt mechanism = %q, want %q", mech, r.Mechanism, mech)
	}
	if len(r.Evidence.Unconfirmed) != 0 {
		t.Errorf("tether run: receipt evidence.unconfirmed = %v, want none", r.Evidence.Unconfirmed)
	}
	if mech == "cgroup" {
		switch {
		case r.Cgroup == nil:
			t.Errorf("tether run --mechanism cgroup: receipt cgroup = nil, want the leaf")
		case !r.Cgroup.Removed || !r.Evidence.LeafRemoved:
			t.Errorf("tether run: receipt cgroup.removed, evidence.leaf_removed = %t, %t, want true, true", r.Cgroup.Removed, r.Evidence.LeafRemoved)
		case exists(r.Cgroup.Path):
			t.Errorf("tether run: leaf %s exists after the run, want it removed", r.Cgroup.Path)
		}
	}
	assertNoSurvivors(t)
}

// daemonScript leaves a setsid'd sleep behind, once it has exec'd.
const daemonScript = `setsid sleep 1000 & until [ "$(head -c 5 /proc/$!/cmdline)" = sleep ]; do :; done; exit 0`

// sh returns argv running script with sh -c; args become $1, $2, ...
func sh(script string, args ...string) []string {
	return append([]string{"sh", "-c", script, "sh"}, args...)
}

func TestRunEndings(t *testing.T) {
	cases := []struct {
		name  string
		flags []string
		argv  []string
		code  int
		check func(t *testing.T, r *receipt.Receipt)
	}{
		{
			name: "exit-code-passes-through",
			argv: sh("exit 3"),
			code: 3,
			check: func(t *testing.T, r *receipt.Receipt) {
				if r.Exit.MainStatus != 3 || r.Exit.Signal != "" {
					t.Errorf("tether run: receipt exit = %+v, want main_status 3 and no signal", r.Exit)
				}
				if r.Stop.Reason != "main-exit" {
					t.Errorf("tether run: receipt stop.reason = %q, want %q", r.Stop.Reason, "main-exit")
				}
			},
		},
		{
			name: "main-killed-by-signal",
			argv: sh("kill -9 $$"),
			code: 128 + 9,
			check: func(t *testing.T, r *receipt.Receipt) {
				if r.Exit.Signal != "SIGKILL" || r.Exit.MainStatus != -1 {
					t.Errorf("tether run: receipt exit = %+v, want signal SIGKILL, main_status -1", r.Exit)
				}
			},
		},
		{
			name: "setsid-daemon-stopped",
			// The shell waits until the daemon has exec'd sleep, so that
			// the argv tether reads for it is settled: read mid-exec,
			// /proc/PID/cmdline is the shell's, setsid's, or empty.
			argv: sh(daemonScript),
			code: 0,
			check: func(t *testing.T, r *receipt.Receipt) {
				if r.StragglersTotal != 1 {
					t.Errorf("tether run: receipt stragglers_total = %d, want 1", r.StragglersTotal)
				}
				if len(r.Stragglers) != 1 {
					t.Fatalf("tether run: receipt stragglers = %+v, want the setsid sleep", r.Stragglers)
				}
				s := r.Stragglers[0]
				if want := []string{"sleep", "1000"}; !slices.Equal(s.Argv, want) || s.PID <= 0 || s.Token == "" {
					t.Errorf("tether run: receipt straggler = %+v, want pid, token and argv %q", s, want)
				}
				if r.Evidence.MembersSeen != 1 || r.Evidence.Signalled != 1 || r.Evidence.Reaped != 1 {
					t.Errorf("tether run: receipt evidence members_seen, signalled, reaped = %d, %d, %d, want 1, 1, 1", r.Evidence.MembersSeen, r.Evidence.Signalled, r.Evidence.Reaped)
				}
			},
		},
		{
			name:  "timeout",
			flags: []string{"--timeout", "300ms"},
			argv:  []string{"sleep", "1000"},
			code:  124,
			check: func(t *testing.T, r *receipt.Receipt) {
				if !r.TimedOut || r.Stop.Reason != "timeout" {
					t.Errorf("tether run --timeout: receipt timed_out, stop.reason = %t, %q, want true, %q", r.TimedOut, r.Stop.Reason, "timeout")
				}
				if r.Exit.Code != 124 {
					t.Errorf("tether run --timeout: receipt exit.code = %d, want 124", r.Exit.Code)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forMechanisms(t, func(t *testing.T, mech string) {
				rcpt := filepath.Join(t.TempDir(), "receipt.json")
				args := append([]string{"run", "--mechanism", mech, "--grace", "200ms", "--receipt", rcpt}, tc.flags...)
				args = append(append(args, "--"), tc.argv...)
				code, _, stderr := tether(t, args...)
				if code != tc.code {
					t.Errorf("tether %s = exit %d, want %d; stderr:\n%s", strings.Join(args, " "), code, tc.code, stderr)
				}
				r, _ := readReceipt(t, rcpt)
				if r.Exit.Code != tc.code {
					t.Errorf("tether run: receipt exit.code = %d, want %d", r.Exit.Code, tc.code)
				}
				if len(r.SignalsReceived) != 0 {
					t.Errorf("tether run: receipt signals_received = %+v, want none", r.SignalsReceived)
				}
				tc.check(t, r)
				checkStopped(t, r, mech)
			})
		})
	}
}

// TestRunSignal sends tether one stop signal while the command runs: the
// stop protocol runs (a setsid daemon included) and tether exits 128+n.
func TestRunSignal(t *testing.T) {
	cases := []struct {
		sig  syscall.Signal
		name string
	}{
		{syscall.SIGINT, "SIGINT"},
		{syscall.SIGTERM, "SIGTERM"},
		{syscall.SIGHUP, "SIGHUP"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forMechanisms(t, func(t *testing.T, mech string) {
				dir := t.TempDir()
				ready, rcpt := filepath.Join(dir, "ready"), filepath.Join(dir, "receipt.json")
				cmd, _, stderr := tetherCmd(t, append([]string{"run", "--mechanism", mech, "--grace", "200ms", "--receipt", rcpt, "--"},
					sh(`setsid sleep 1000 & touch "$1"; sleep 1000`, ready)...)...)
				done := startTether(t, cmd)
				awaitFile(t, ready, done)
				if err := cmd.Process.Signal(tc.sig); err != nil {
					t.Fatalf("signal tether: %v", err)
				}
				want := 128 + int(tc.sig)
				if code := <-done; code != want {
					t.Errorf("tether run, then %s = exit %d, want %d; stderr:\n%s", tc.name, code, want, stderr)
				}
				r, _ := readReceipt(t, rcpt)
				wantSigs := []string{tc.name + " stop"}
				if got := signalList(r); !slices.Equal(got, wantSigs) {
					t.Errorf("tether run, then %s: receipt signals_received = %q, want %q", tc.name, got, wantSigs)
				}
				if r.Stop.Reason != "signal" || r.TimedOut {
					t.Errorf("tether run, then %s: receipt stop.reason, timed_out = %q, %t, want %q, false", tc.name, r.Stop.Reason, r.TimedOut, "signal")
				}
				if r.Exit.Code != want {
					t.Errorf("tether run, then %s: receipt exit.code = %d, want %d", tc.name, r.Exit.Code, want)
				}
				if r.Evidence.MembersSeen < 2 {
					t.Errorf("tether run, then %s: receipt evidence.members_seen = %d, want >= 2 (main and the setsid sleep)", tc.name, r.Evidence.MembersSeen)
				}
				checkStopped(t, r, mech)
			})
		})
	}
}

// TestRunSecondSignalSkipsGrace sends SIGINT to tether while it waits out a
// long grace for a tree that survives SIGTERM: the second SIGINT must cut
// the grace short and kill, and a third is absorbed.
func TestRunSecondSignalSkipsGrace(t *testing.T) {
	forMechanisms(t, func(t *testing.T, mech string) {
		dir := t.TempDir()
		ready, termed := filepath.Join(dir, "ready"), filepath.Join(dir, "termed")
		rcpt := filepath.Join(dir, "receipt.json")
		// sleep ignores SIGTERM; the shell traps it, which tells the test
		// that the first SIGINT was handled (the stop protocol sent
		// SIGTERM) before the second is sent: two pending SIGINTs would
		// merge into one. The trap writes the file with a redirection, not
		// touch: the fallback sends SIGTERM to members forked during the
		// grace, which would kill a touch before it ran.
		script := `trap "" TERM; sleep 1000 & trap ': > "$2"' TERM; : > "$1"; while :; do wait; done`
		cmd, _, stderr := tetherCmd(t, append([]string{"run", "--mechanism", mech, "--grace", "60s", "--receipt", rcpt, "--"},
			sh(script, ready, termed)...)...)
		done := startTether(t, cmd)
		awaitFile(t, ready, done)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatalf("first SIGINT: %v", err)
		}
		awaitFile(t, termed, done)
		if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatalf("second SIGINT: %v", err)
		}
		// A third, apart from the second so that it is not merged with
		// it. Tether may have finished already; then it is not recorded.
		time.Sleep(150 * time.Millisecond)
		cmd.Process.Signal(syscall.SIGINT)

		var code int
		select {
		case code = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("tether run --grace 60s did not finish after a second SIGINT; stderr:\n%s", stderr)
		}
		if code != 130 {
			t.Errorf("tether run, then SIGINT twice = exit %d, want 130; stderr:\n%s", code, stderr)
		}
		r, _ := readReceipt(t, rcpt)
		got := signalList(r)
		want := []string{"SIGINT stop", "SIGINT skip-grace"}
		if len(got) == 3 {
			want = append(want, "SIGINT absorbed")
		}
		if !slices.Equal(got, want) {
			t.Errorf("tether run, then SIGINT twice: receipt signals_received = %q, want %q (and a third %q if recorded)", got, want[:2], "SIGINT absorbed")
		}
		if !hasStep(r, "grace", "cut short") {
			t.Errorf("tether run, then SIGINT twice: receipt steps = %s, want a grace step cut short", stepList(r))
		}
		if !hasStep(r, "kill", "") {
			t.Errorf("tether run, then SIGINT twice: receipt steps = %s, want a kill step", stepList(r))
		}
		if !r.Evidence.KillUsed {
			t.Errorf("tether run, then SIGINT twice: receipt evidence.kill_used = false, want true")
		}
		if r.Stop.Reason != "signal" {
			t.Errorf("tether run, then SIGINT twice: receipt stop.reason = %q, want %q", r.Stop.Reason, "signal")
		}
		checkStopped(t, r, mech)
	})
}

// signalList renders signals_received as "NAME action" strings.
func signalList(r *receipt.Receipt) []string {
	out := []string{}
	for _, s := range r.SignalsReceived {
		out = append(out, s.Name+" "+s.Action)
	}
	return out
}

// hasStep reports whether the receipt has a step called name whose
// observation contains observed.
func hasStep(r *receipt.Receipt, name, observed string) bool {
	for _, s := range r.Stop.Steps {
		if s.Name == name && strings.Contains(s.Observed, observed) {
			return true
		}
	}
	return false
}

func stepList(r *receipt.Receipt) string {
	var b strings.Builder
	for _, s := range r.Stop.Steps {
		b.WriteString("\n  " + s.Name + ": " + s.Observed)
		if s.Error != "" {
			b.WriteString(" (error: " + s.Error + ")")
		}
	}
	return b.String()
}

// TestRunNamesStragglers: what the main process left is named on stderr
// by pid and command, and the message points at the receipt only when
// one was written.
func TestRunNamesStragglers(t *testing.T) {
	cgroupParent(t)
	for _, withReceipt := range []bool{false, true} {
		args := []string{"run", "--", "sh", "-c", "setsid sleep 1000 >/dev/null 2>&1 &"}
		want := "(--receipt FILE keeps the evidence)"
		if withReceipt {
			args = append([]string{"run", "--receipt", filepath.Join(t.TempDir(), "r.json")}, args[1:]...)
			want = "(see the receipt)"
		}
		code, _, stderr := tether(t, args...)
		// Its argv is read when tether finds it: sh's forked subshell, or
		// setsid, or sleep, depending on how far it got.
		if code != 0 || !regexp.MustCompile(`stopped 1 straggler it left: \d+ \S.* `+regexp.QuoteMeta(want)).MatchString(stderr) {
			t.Errorf("tether %s = %d, stderr %q; want the straggler named and %q", strings.Join(args, " "), code, stderr, want)
		}
	}
	assertNoSurvivors(t)
}
