package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// onTerminal runs tether with args under script(1), so that its stderr
// is a terminal, and returns what the terminal showed.
func onTerminal(t *testing.T, xdg string, args ...string) string {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skipf("script(1) (util-linux) not installed: %v", err)
	}
	exe, _ := os.Executable()
	line := `"$TETHER_EXE"`
	for _, a := range args {
		line += " '" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	cmd, out, stderr := tetherCmd(t)
	cmd.Path, cmd.Args = script, []string{"script", "-qec", line, "/dev/null"}
	cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR", "SHELL"), "XDG_RUNTIME_DIR="+xdg, "TETHER_EXE="+exe, "SHELL=/bin/sh")
	wait(t, cmd)
	return strings.ReplaceAll(out.String()+stderr.String(), "\r\n", "\n")
}

// TestProgressOnTerminal: a stop that takes its time says, on a terminal,
// what it sent to how many processes, what it waits for and how long,
// when the kill was needed, and in its last line whether it was; without
// a terminal it says none of that (the receipt does).
func TestProgressOnTerminal(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	ignoring := `trap "" TERM; sleep 1000 & kill -INT $PPID; wait`
	got := onTerminal(t, xdg, "run", "--grace", "0.3", "--", "sh", "-c", ignoring)
	for _, want := range []string{
		"tether: stop: 2 members in cgroup.procs; SIGTERM (and SIGCONT) sent to 2; waiting up to 300ms for them to exit (a second ^C kills at once)\n",
		"tether: stop: still populated after 300ms\n",
		"tether: stop: kill: wrote 1 to cgroup.kill\n",
		"tether: stopped 2 processes in ",
		"; the kill was needed\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tether run on a terminal lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "members outlived the grace period") {
		t.Errorf("the kill is reported twice:\n%s", got)
	}
	_, _, plain := tetherIn(t, xdg, nil, "run", "--grace", "0.3", "--", "sh", "-c", ignoring)
	if strings.Contains(plain, "stop:") || !strings.Contains(plain, "members outlived the grace period and were killed") {
		t.Errorf("tether run without a terminal: stderr = %q, want no progress, only the summary", plain)
	}

	mustStart(t, xdg, nil, "-q", "--name", "slow", "--", "sh", "-c", `trap "" TERM; sleep 1000 & wait`)
	awaitProcs(t, xdg, "slow", 2)
	slowRun := statusOf(t, xdg, "slow").RunID
	got = onTerminal(t, xdg, "stop", "--grace", "0.3", "slow")
	for _, want := range []string{
		"tether: slow: stop: 2 members in cgroup.procs; SIGTERM (and SIGCONT) sent to 2; waiting up to 300ms for them to exit (^C kills at once)\n",
		"tether: slow: stop: kill: wrote 1 to cgroup.kill\n",
		"tether: slow: stopped 2 processes in ",
		"slow\tstopped (request): 2 processes, the kill needed after the grace; confirmed; receipt " + filepath.Join(xdg, "tether", "receipts", "slow@"+slowRun+".json") + "\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("tether stop on a terminal lacks %q:\n%s", want, got)
		}
	}
	assertNoSurvivors(t)
}
