package cli_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/cli"
)

// TestParseErrorsInTethersWords: every bad flag value or argument count is
// refused before anything runs, with a usage exit (125 for run, as
// timeout(1)'s own errors; 2 elsewhere), naming the flag or what was
// wanted in tether's words — no strconv or cobra phrasing.
func TestParseErrorsInTethersWords(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--timeout", "abc", "--", "true"}, `"--timeout"`},
		{[]string{"run", "--memory", "12Q", "--", "true"}, "--memory"},
		{[]string{"run", "--cpus", "x", "--", "true"}, "--cpus"},
		{[]string{"run", "--pids", "-1", "--", "true"}, "--pids"},
		{[]string{"run", "--signal", "FOO", "--", "true"}, "--signal"},
		{[]string{"run", "--receipt-fd", "x", "--", "true"}, "--receipt-fd"},
		{[]string{"run", "--mechanism", "x", "--", "true"}, "want auto, cgroup or fallback"},
		{[]string{"start", "--log-keep", "x", "--", "true"}, "--log-keep"},
		{[]string{"start", "--max", "1.5", "--", "true"}, "--max"},
		{[]string{"start", "--until", "x", "--", "true"}, "want main-exit or empty"},
		{[]string{"start", "--ready", "bogus", "--", "true"}, "--ready"},
		{[]string{"logs", "--tail", "x", "s"}, "--tail"},
		{[]string{"logs", "--since", "yesterday", "s"}, "--since"},
		{[]string{"logs"}, "want one session NAME, got 0 arguments (usage: tether logs NAME"},
		{[]string{"wait", "a", "b"}, "want one session NAME, got 2 arguments"},
		{[]string{"status", "-n", "x", "s"}, "--lines"},
		{[]string{"kill", "-s", "FOO", "s"}, "--signal"},
		{[]string{"stop", "--grace", "x", "s"}, "--grace"},
		{[]string{"reap", "--prune", "x"}, "--prune"},
		{[]string{"ls", "--filter", "x"}, "--filter"},
	} {
		if c.args[0] == "kill" && runtime.GOOS == "windows" {
			continue // not on Windows yet: refused as such (platform.go)
		}
		code, out, stderr := tether(t, c.args...)
		want := cli.ExitUsage
		if c.args[0] == "run" {
			want = 125
		}
		bad := ""
		for _, leak := range []string{"strconv", "invalid syntax", "arg(s)", "parsing \"", "ParseInt", "ParseFloat"} {
			if strings.Contains(stderr, leak) {
				bad = leak
			}
		}
		if code != want || out != "" || !strings.Contains(stderr, c.want) || bad != "" {
			t.Errorf("tether %s = %d, %q, stderr %q; want %d, nothing on stdout, saying %q in tether's words (found %q)",
				strings.Join(c.args, " "), code, out, stderr, want, c.want, bad)
		}
	}
}
