package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/cgroup"
)

// TestRunBadInput checks that tether refuses what it cannot run, with a
// "tether: " message and the right code, before anything starts and
// without leaving a leaf.
func TestRunBadInput(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	noExec := filepath.Join(tmp, "no-exec-bit")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\n: > \"$1\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string // after "run"; "STARTED" is replaced by the started file
		code int
		msg  string // in stderr
	}{
		{"no-command", nil, 125, "missing COMMAND"},
		{"flags-but-no-command", []string{"--timeout", "1s"}, 125, "missing COMMAND"},
		{"unknown-flag", []string{"--no-such-flag", "--", "touch", "STARTED"}, 125, "unknown flag"},
		{"bad-mechanism", []string{"--mechanism", "magic", "--", "touch", "STARTED"}, 125, "--mechanism"},
		{"bad-require", []string{"--require", "magic", "--", "touch", "STARTED"}, 125, "--require"},
		{"require-contradicts-mechanism", []string{"--require", "cgroup", "--mechanism", "fallback", "--", "touch", "STARTED"}, 125, "contradicts"},
		{"negative-grace", []string{"--grace", "-1s", "--", "touch", "STARTED"}, 125, "negative"},
		{"zero-kill-wait", []string{"--kill-wait", "0", "--", "touch", "STARTED"}, 125, "--kill-wait"},
		{"bad-duration", []string{"--timeout", "soon", "--", "touch", "STARTED"}, 125, "--timeout"},
		{"command-not-found", []string{"--", "tether-test-no-such-command"}, 127, "command not found"},
		{"no-exec-bit", []string{"--", noExec, "STARTED"}, 126, "cannot execute"},
		{"directory", []string{"--", tmp}, 126, "cannot execute"},
		{"relative-cgroup-parent", []string{"--cgroup-parent", "relative/path", "--", "touch", "STARTED"}, 125, "absolute"},
		{"cgroup-parent-not-cgroup2", []string{"--cgroup-parent", tmp, "--", "touch", "STARTED"}, 125, "not a cgroup v2"},
		{"cgroup-parent-missing", []string{"--cgroup-parent", filepath.Join(tmp, "nonexistent"), "--", "touch", "STARTED"}, 125, "nonexistent"},
		{"receipt-dir-missing", []string{"--receipt", filepath.Join(tmp, "nonexistent-dir", "r.json"), "--", "touch", "STARTED"}, 125, "nonexistent-dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			started := filepath.Join(t.TempDir(), "started")
			args := []string{"run"}
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "STARTED", started))
			}
			code, stderr, parent := runInTestParent(t, args...)
			if code != tc.code {
				t.Errorf("tether %s = exit %d, want %d", strings.Join(args, " "), code, tc.code)
			}
			checkRefusal(t, args, stderr, tc.msg, started, parent)
		})
	}
}

// runInTestParent runs tether with TETHER_CGROUP_PARENT set to a cgroup
// of t's own where this user may create one, so that a leaf created by
// mistake is seen; it returns that parent, or "" if there is none.
func runInTestParent(t *testing.T, args ...string) (code int, stderr, parent string) {
	t.Helper()
	cmd, _, errb := tetherCmd(t, args...)
	if _, err := leafParent(); err == nil {
		parent = testParent(t)
		cmd.Env = append(withoutEnv(cmd.Env, "TETHER_CGROUP_PARENT"), "TETHER_CGROUP_PARENT="+parent)
	}
	code = wait(t, cmd)
	return code, errb.String(), parent
}

// checkRefusal asserts that a refused run said why on stderr, started
// nothing and left no leaf.
func checkRefusal(t *testing.T, args []string, stderr, msg, started, parent string) {
	t.Helper()
	run := "tether " + strings.Join(args, " ")
	if !strings.HasPrefix(stderr, "tether: ") || !strings.Contains(stderr, msg) {
		t.Errorf("%s: stderr = %q, want \"tether: ...%s...\"", run, stderr, msg)
	}
	if exists(started) {
		t.Errorf("%s: the command ran, want it never started", run)
	}
	if parent != "" {
		if l := leaves(parent); len(l) != 0 {
			t.Errorf("%s: leaves left = %q, want none", run, l)
		}
	}
	assertNoSurvivors(t)
}

// TestRunReceiptOnStartFailure checks that --receipt is written when the
// command cannot be started, with the error and the exit code.
func TestRunReceiptOnStartFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string // between --receipt FILE and --
		argv []string
		code int
	}{
		{"command-not-found", nil, []string{"tether-test-no-such-command"}, 127},
		{"cgroup-parent-not-cgroup2", []string{"--cgroup-parent", os.TempDir()}, []string{"true"}, 125},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rcpt := filepath.Join(t.TempDir(), "receipt.json")
			args := append(append(append([]string{"run", "--receipt", rcpt}, tc.args...), "--"), tc.argv...)
			code, _, stderr := tether(t, args...)
			if code != tc.code {
				t.Errorf("tether %s = exit %d, want %d; stderr:\n%s", strings.Join(args, " "), code, tc.code, stderr)
			}
			r, _ := readReceipt(t, rcpt)
			if r.Error == "" {
				t.Errorf("tether run: receipt error = \"\", want the start error")
			}
			if r.Exit.Code != tc.code {
				t.Errorf("tether run: receipt exit.code = %d, want %d", r.Exit.Code, tc.code)
			}
			if r.Main != nil {
				t.Errorf("tether run: receipt main = %+v, want none (nothing started)", r.Main)
			}
			if !r.StopConfirmed {
				t.Errorf("tether run: receipt stop_confirmed = false, want true (nothing started)")
			}
			assertNoSurvivors(t)
		})
	}
}

// TestRunReceiptPathIsDirectory checks that a --receipt naming an existing
// directory is refused before the command starts, as a missing directory
// is: otherwise the command runs and its receipt is lost.
func TestRunReceiptPathIsDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	args := []string{"run", "--receipt", dir, "--", "touch", started}
	code, stderr, parent := runInTestParent(t, args...)
	if code != 125 {
		t.Errorf("tether %s = exit %d, want 125", strings.Join(args, " "), code)
	}
	checkRefusal(t, args, stderr, dir, started, parent)
}

// TestRunUnprivileged runs tether as nobody, who may not write the cgroup
// tether (root) lives in.
func TestRunUnprivileged(t *testing.T) {
	t.Parallel()
	needRoot(t)
	mount, err := cgroup.Mount()
	if err != nil {
		t.Skipf("needs cgroup v2: %v", err)
	}

	t.Run("explicit-parent-not-writable", func(t *testing.T) {
		t.Parallel()
		started := filepath.Join(publicDir(t, true), "started")
		args := []string{"run", "--cgroup-parent", mount, "--", "touch", started}
		cmd, _, stderr := nobodyCmd(t, args...)
		if code := wait(t, cmd); code != 125 {
			t.Errorf("tether %s as nobody = exit %d, want 125; stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
		checkRefusal(t, args, stderr.String(), "not writable", started, "")
	})

	// The remaining cases rely on tether's own cgroup being out of
	// nobody's reach, so that auto mode has to fall back.
	own, err := cgroup.DefaultParent()
	if err != nil {
		t.Skipf("cannot find our own cgroup: %v", err)
	}
	if writableBy(own, nobodyUID) {
		t.Skipf("our cgroup %s is writable by uid %d: no fallback to test", own, nobodyUID)
	}

	t.Run("auto-falls-back", func(t *testing.T) {
		t.Parallel()
		dir := publicDir(t, true)
		rcpt := filepath.Join(dir, "receipt.json")
		args := append([]string{"run", "--grace", "200ms", "--receipt", rcpt, "--"}, sh("setsid sleep 1000 & exit 0")...)
		cmd, _, stderr := nobodyCmd(t, args...)
		if code := wait(t, cmd); code != 0 {
			t.Errorf("tether %s as nobody = exit %d, want 0; stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
		if !strings.Contains(stderr.String(), "tether: ") || !strings.Contains(stderr.String(), "fallback") {
			t.Errorf("tether run as nobody: stderr = %q, want a \"tether: \" warning about the fallback", stderr)
		}
		r, _ := readReceipt(t, rcpt)
		if r.StragglersTotal < 1 {
			t.Errorf("tether run as nobody: receipt stragglers_total = %d, want >= 1", r.StragglersTotal)
		}
		if len(r.Caveats) == 0 {
			t.Errorf("tether run as nobody: receipt caveats = [], want what the fallback cannot guarantee")
		}
		checkStopped(t, r, "fallback")
	})

	t.Run("require-cgroup", func(t *testing.T) {
		t.Parallel()
		started := filepath.Join(publicDir(t, true), "started")
		args := []string{"run", "--require", "cgroup", "--", "touch", started}
		cmd, _, stderr := nobodyCmd(t, args...)
		if code := wait(t, cmd); code != 125 {
			t.Errorf("tether %s as nobody = exit %d, want 125; stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
		checkRefusal(t, args, stderr.String(), "cgroup", started, "")
	})
}
