package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/testuser"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/session"
)

// startWant is tether start of argv with every flag at its default, its
// session's Options then changed by mod.
func startWant(t *testing.T, argv []string, mod func(*session.Options)) *startOptions {
	t.Helper()
	term, err := parseSignal("TERM") // 0 on Windows
	if err != nil {
		t.Fatal(err)
	}
	o := &startOptions{session: session.Options{
		Argv: argv, Grace: contain.DefaultGrace, KillWait: contain.DefaultKillWait,
		StopSignal: term, LogMax: session.DefaultLogMax, LogKeep: session.DefaultLogKeep, ReadyTimeout: session.DefaultReadyWait,
	}}
	if mod != nil {
		mod(&o.session)
	}
	return o
}

// TestStartFlags: start's flags and command as parsed and checked into
// the session's Options, --env-file read, without starting anything.
func TestStartFlags(t *testing.T) {
	dir := testuser.TempDir(t)
	envFile := filepath.Join(dir, "ci.env")
	if err := os.WriteFile(envFile, []byte("A=1\nB=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	killServer := "tmux kill-server"
	stopExec := (&commandFlags{stopExec: &killServer}).stopExecArgv() // sh -c, or cmd.exe /c
	quiet := startWant(t, []string{"tmux"}, func(o *session.Options) {
		o.Name, o.Owner, o.Profile, o.Until, o.TTL = "web", "none", "tmux", session.UntilEmpty, 2*time.Hour
	})
	quiet.json, quiet.quiet, quiet.noReap = true, true, true
	pool := startWant(t, []string{"x"}, func(o *session.Options) { o.Pool, o.Max = "ci", 2 })
	pool.requireFree = []string{dir + "=1G"}
	checkFlags(t, "start", ExitUsage, newStartCmdRun, []flagCase[startOptions]{
		{[]string{"--", "sleep", "9"}, startWant(t, []string{"sleep", "9"}, nil), ""},
		{[]string{"--name", "web", "--owner", "none", "--profile", "tmux", "--until", "empty", "--ttl", "2h", "--json", "-q", "--no-reap", "--", "tmux"}, quiet, ""},
		{[]string{"--profile", "playwright", "--until", "main-exit", "--", "x"}, startWant(t, []string{"x"}, func(o *session.Options) {
			o.Profile, o.Until = "playwright", session.UntilMainExit
		}), ""},
		{[]string{"--grace", "0", "--kill-wait", "1", "--", "x"}, startWant(t, []string{"x"}, func(o *session.Options) { o.Grace, o.KillWait = contain.NoGrace, time.Second }), ""},
		{[]string{"--pool", "ci", "--max", "2", "--require-free", dir + "=1G", "--", "x"}, pool, ""},
		{[]string{"--ready", "tcp:5173", "--ready", "file:x", "--ready-timeout", "5", "--", "x"}, startWant(t, []string{"x"}, func(o *session.Options) {
			o.Ready, o.ReadyTimeout = []string{"tcp:5173", "file:x"}, 5*time.Second
		}), ""},
		{[]string{"--log-max", "64K", "--log-keep", "2", "--", "x"}, startWant(t, []string{"x"}, func(o *session.Options) { o.LogMax, o.LogKeep = 64<<10, 2 }), ""},
		{[]string{"--env-file", envFile, "-e", "B=2", "--", "x"}, startWant(t, []string{"x"}, func(o *session.Options) {
			o.Set = []string{"A=1", "B=x", "B=2"}
			o.Env = mergeEnv(os.Environ(), o.Set)
		}), ""},
		{[]string{"--memory", "1G", "--limits", "best-effort", "--mechanism", "cgroup", "--", "x"}, startWant(t, []string{"x"}, func(o *session.Options) {
			o.Limits, o.BestEffortLimits, o.Mechanism = limits.Spec{Memory: 1 << 30}, true, "cgroup"
		}), ""},
		{[]string{"--stop-exec", "tmux kill-server", "--", "x"}, startWant(t, []string{"x"}, func(o *session.Options) { o.StopExec = stopExec }), ""},
		{[]string{}, nil, "missing COMMAND"},
		{[]string{"--name", "a/b", "--", "x"}, nil, "a/b"},
		{[]string{"--ready", "http:80", "--", "x"}, nil, "http:80"},
		{[]string{"--ready", "tcp:1", "--ready-timeout", "0", "--", "x"}, nil, "--ready-timeout must be positive"},
		{[]string{"--max", "2", "--", "x"}, nil, "--max needs --pool"},
		{[]string{"--log-max", "1K", "--", "x"}, nil, "--log-max 1K: at least"},
		{[]string{"--log-keep", "0", "--", "x"}, nil, "--log-keep 0: at least 1"},
		{[]string{"--mechanism", "box", "--", "x"}, nil, `--mechanism "box"`},
		{[]string{"--signal", "NOPE", "--", "x"}, nil, "--signal"},
		{[]string{"--env-file", filepath.Join(dir, "missing.env"), "--", "x"}, nil, "--env-file"},
		{[]string{"--storage-max", "x", "--", "y"}, nil, "--storage-max"},
		{[]string{"--memory", "0", "--", "x"}, nil, "must be more than 0"},
		{[]string{"--ttl", "soon", "--", "x"}, nil, "soon"},
	})
}
