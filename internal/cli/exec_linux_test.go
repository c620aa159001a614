package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/registry"
)

// execIn runs tether exec with XDG_RUNTIME_DIR=xdg and the caller's
// TMPDIR set to scratch.
func execIn(t *testing.T, xdg, scratch string, args ...string) (int, string, string) {
	t.Helper()
	return tetherIn(t, xdg, []string{"TMPDIR=" + scratch}, append([]string{"exec"}, args...)...)
}

// TestExecTmuxAfterScratchGone: a tmux server started in a session from a
// caller whose TMPDIR is then deleted is reached by `tether exec NAME --
// tmux ls` and by `eval "$(tether env NAME)"`, with nothing re-exported by
// hand; a daemon a tool call starts through tether exec is the session's
// and goes with its stop.
func TestExecTmuxAfterScratchGone(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skipf("tmux not installed: %v", err)
	}
	cgroupParent(t)
	xdg := stateEnv(t)
	scratch, _ := os.MkdirTemp("", "scratch-")
	mustStart(t, xdg, []string{"TMPDIR=" + scratch}, "--name", "tm", "--profile", "tmux", "--until", "empty", "--",
		"tmux", "-f", "/dev/null", "new-session", "-d", "-s", "work", "sleep 1000")
	os.RemoveAll(scratch)
	var code int
	var out, stderr string
	for t0 := time.Now(); time.Since(t0) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
		if code, out, stderr = execIn(t, xdg, scratch, "tm", "--", "tmux", "ls"); code == 0 {
			break
		}
	}
	if code != 0 || !strings.HasPrefix(out, "work:") {
		t.Fatalf("tether exec tm -- tmux ls = %d, %q (%s), want the work session", code, out, stderr)
	}

	// Beside the session: tether env, eval'd by a real shell.
	exe, _ := os.Executable()
	sh, shOut, shErr := tetherCmd(t)
	sh.Path, sh.Args = "/bin/sh", []string{"sh", "-c", `eval "$("$TETHER_EXE" env tm)" && tmux ls`}
	sh.Env = append(withoutEnv(sh.Env, "XDG_RUNTIME_DIR", "TMPDIR"), "XDG_RUNTIME_DIR="+xdg, "TMPDIR="+scratch, "TETHER_EXE="+exe)
	if code := wait(t, sh); code != 0 || !strings.HasPrefix(shOut.String(), "work:") {
		t.Errorf(`sh -c 'eval "$(tether env tm)" && tmux ls' = %d, %q (%s)`, code, shOut, shErr)
	}

	// In the session: a daemon started through exec is a member.
	before := statusOf(t, xdg, "tm").Procs
	if code, _, stderr := execIn(t, xdg, scratch, "tm", "--", "sh", "-c", "setsid sleep 1000 >/dev/null 2>&1 < /dev/null &"); code != 0 {
		t.Fatalf("tether exec tm -- sh -c 'setsid sleep 1000 &' = %d: %s", code, stderr)
	}
	if after := statusOf(t, xdg, "tm").Procs; after != before+1 {
		t.Errorf("procs = %d after exec started a daemon, want %d: the daemon is the session's", after, before+1)
	}
	// The daemon outlives the profile's stop-exec (tmux kill-server), so
	// the stop waits out its grace before the TERM: 1s, not the 10s
	// default, which is all of the test's time otherwise.
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "--grace", "1s", "tm"); code != 0 {
		t.Fatalf("tether stop tm = %d: %s", code, stderr)
	}
	assertNoSurvivors(t)
}

// TestExecExitAndRefusals: exec passes the command's status through
// (timeout(1)'s codes for what tether could not run), forwards signals,
// and refuses sessions it cannot join with the reason.
func TestExecExitAndRefusals(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	scratch := t.TempDir()
	mustStart(t, xdg, nil, "--name", "s", "--", "sleep", "1000")
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"exit status", []string{"s", "--", "sh", "-c", "exit 7"}, 7, ""},
		{"without --", []string{"s", "sh", "-c", "exit 3"}, 3, ""},
		{"signal", []string{"s", "--", "sh", "-c", "kill -TERM $$"}, 128 + 15, ""},
		{"not found", []string{"s", "--", "no-such-command-xyz"}, 127, "no-such-command-xyz"},
		{"not executable", []string{"s", "--", "/etc/hostname"}, 126, "/etc/hostname"},
		{"no session", []string{"nope", "--", "true"}, 125, "nope"},
		{"no command", []string{"s", "--"}, 125, "usage"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := execIn(t, xdg, scratch, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.msg) {
				t.Errorf("tether exec %s = %d, %q; want %d mentioning %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.msg)
			}
		})
	}

	t.Run("environment and cwd", func(t *testing.T) {
		s := statusOf(t, xdg, "s")
		cmd, out, stderr := tetherCmd(t, "exec", "s", "--", "sh", "-c", `echo "$TETHER_SESSION $TMPDIR $MINE $(pwd)"`)
		cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR", "TMPDIR"), "XDG_RUNTIME_DIR="+xdg, "TMPDIR="+scratch, "MINE=kept", "TETHER_SESSION=forged")
		cmd.Dir = scratch
		want := "s " + filepath.Join(s.RuntimeDir, "tmp") + " kept " + scratch
		if code := wait(t, cmd); code != 0 || strings.TrimSpace(out.String()) != want {
			t.Errorf("exec env = %d, %q (%s), want %q", code, out, stderr, want)
		}
	})

	t.Run("forwards signals", func(t *testing.T) {
		ready := filepath.Join(t.TempDir(), "ready")
		cmd, out, stderr := tetherCmd(t, "exec", "s", "--", "sh", "-c", `trap 'echo got USR1; exit 9' USR1; : > "$0"; while :; do sleep 0.05; done`, ready)
		cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg)
		if err := startCmd(cmd); err != nil {
			t.Fatal(err)
		}
		// The buffers are os/exec's until Wait: readiness goes through a file.
		for t0 := time.Now(); time.Since(t0) < 10*time.Second; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(ready); err == nil {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGUSR1)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != 9 || !strings.Contains(out.String(), "got USR1") {
			t.Errorf("exec after SIGUSR1 = %d, %q (%s), want 9 from the command's trap", code, out, stderr)
		}
	})

	t.Run("ended session", func(t *testing.T) {
		mustStart(t, xdg, nil, "--name", "gone", "--", "true")
		awaitState(t, xdg, "gone", registry.StateStopped)
		code, _, stderr := execIn(t, xdg, scratch, "gone", "--", "true")
		if code != 125 || !strings.Contains(stderr, `session "gone": has ended`) {
			t.Errorf("exec in an ended session = %d, %q; want 125 saying it has ended", code, stderr)
		}
		code, _, stderr = tetherIn(t, xdg, nil, "env", "gone")
		if code != 1 || !strings.Contains(stderr, "has ended") {
			t.Errorf("env of an ended session = %d, %q; want 1 saying it has ended", code, stderr)
		}
	})

	t.Run("fallback session", func(t *testing.T) {
		mustStart(t, xdg, nil, "--name", "fb", "--mechanism", "fallback", "--", "sleep", "1000")
		code, _, stderr := execIn(t, xdg, scratch, "fb", "--", "true")
		if code != 125 || !strings.Contains(stderr, "no cgroup") {
			t.Errorf("exec in a fallback session = %d, %q; want 125 saying it has no cgroup", code, stderr)
		}
	})
	tetherIn(t, xdg, nil, "stop", "--all")
	assertNoSurvivors(t)
}

// TestExecEnvAndPath: exec -e values win over the session's own variables
// (TMPDIR is one tether sets), the command is found on the PATH -e gives
// it rather than tether's, and a malformed -e is refused before anything
// runs.
func TestExecEnvAndPath(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "--name", "env", "--", "sleep", "1000")
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "only-here"), []byte("#!/bin/sh\necho found-here \"$TMPDIR\" \"$FOO\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := tetherIn(t, xdg, nil, "exec", "-e", "TMPDIR=/mine", "-e", "FOO=bar",
		"-e", "PATH="+bin+":/usr/bin:/bin", "env", "--", "only-here")
	if code != 0 || out != "found-here /mine bar\n" {
		t.Errorf("tether exec -e TMPDIR=/mine -e FOO=bar -e PATH=%s env -- only-here = %d, %q (%s), want the script found and the values given", bin, code, out, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "exec", "-e", "no-equals", "env", "--", "true"); code != 125 || !strings.Contains(stderr, "KEY=VALUE") {
		t.Errorf("tether exec -e no-equals = %d (%s), want 125 saying KEY=VALUE", code, stderr)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "env"); code != 0 {
		t.Fatalf("tether stop env = %d: %s", code, stderr)
	}
	assertNoSurvivors(t)
}
