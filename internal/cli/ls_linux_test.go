package cli_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// TestLsAndStatusShowWhatPeopleLookFor: ls shows the main pid, the
// command, the memory and how ended sessions ended; status shows the
// processes as a tree and says when the runtime dir is gone.
func TestLsAndStatusShowWhatPeopleLookFor(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "-q", "--name", "live", "--", "sh", "-c", "echo hello-status; sleep 1000 & setsid sleep 1001 & wait")
	mustStart(t, xdg, nil, "-q", "--name", "done", "--", "sh", "-c", "exit 3")
	awaitProcs(t, xdg, "live", 3)
	awaitState(t, xdg, "done", registry.StateStopped)

	code, out, stderr := tetherIn(t, xdg, nil, "status", "--json", "live")
	var live session.Status
	if err := json.Unmarshal([]byte(out), &live); code != 0 || err != nil {
		t.Fatalf("status --json = %d, %v: %s", code, err, stderr)
	}
	if live.MainPID <= 0 || live.MemoryBytes <= 0 || live.MemorySource == "" || !live.RuntimeDirExists {
		t.Errorf("status: main_pid %d memory %d (%q) runtime_dir_exists %t", live.MainPID, live.MemoryBytes, live.MemorySource, live.RuntimeDirExists)
	}
	kids := 0
	for _, p := range live.Processes {
		if p.PPID == live.MainPID && strings.HasPrefix(strings.Join(p.Argv, " "), "sleep 100") {
			kids++
		}
	}
	if len(live.Processes) != 3 || kids != 2 {
		t.Errorf("processes = %+v, want the main sh and its two sleeps", live.Processes)
	}

	_, text, _ := tetherIn(t, xdg, nil, "status", "live")
	main := strconv.Itoa(live.MainPID)
	for _, want := range []string{"main pid:   " + main, "processes:\n  └─" + main + " sh -c", "    ├─", "    └─", "sleep 1001", "log (last 10 lines):\n  ", "Z out hello-status\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("status live lacks %q:\n%s", want, text)
		}
	}
	_, text, _ = tetherIn(t, xdg, nil, "status", "done")
	if !strings.Contains(text, "(removed)") || !strings.Contains(text, "exited (3)") {
		t.Errorf("status done does not say its runtime dir was removed and how it exited:\n%s", text)
	}

	_, table, _ := tetherIn(t, xdg, nil, "ls", "--all")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.Contains(lines[0], "PID") || !strings.HasSuffix(lines[0], "COMMAND") {
		t.Fatalf("ls --all =\n%s", table)
	}
	row := func(name string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); f[0] == name {
				return f
			}
		}
		t.Fatalf("ls --all has no %s:\n%s", name, table)
		return nil
	}
	if f := row("live"); f[1] != live.RunID[:12] || f[3] != main || f[len(f)-1] != "sl…" { // NAME RUN STATE PID
		t.Errorf("ls row of live = %q, want its run id, its main pid %s and its command cut at 48 runes", f, main)
	}
	if l := strings.Join(row("done"), " "); !strings.Contains(l, "exited (3) ") || !strings.Contains(l, " ago ") {
		t.Errorf("ls row of done = %q, want exited (3) … ago", l)
	}
	tetherIn(t, xdg, nil, "stop", "live")
	assertNoSurvivors(t)
}

// TestLsQuietFilterFormat: ls -q prints names only; --filter keeps what
// matches (a state filter finds ended sessions without --all; values of
// one key are alternatives, keys must all match; name takes a pattern);
// --format prints a template over --json's field names, or JSON Lines;
// a bad key, state, pattern or template is a usage error in tether's
// words.
func TestLsQuietFilterFormat(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "-q", "--name", "web-1", "--", "sleep", "1000")
	mustStart(t, xdg, nil, "-q", "--name", "web-2", "--pool", "p", "--", "sleep", "1000")
	mustStart(t, xdg, nil, "-q", "--name", "api", "--", "sleep", "1000")
	mustStart(t, xdg, nil, "-q", "--name", "web-done", "--", "sh", "-c", "exit 4")
	awaitState(t, xdg, "web-done", registry.StateStopped)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-q"}, "api\nweb-1\nweb-2\n"},
		{[]string{"-q", "--all"}, "api\nweb-1\nweb-2\nweb-done\n"},
		{[]string{"-q", "--filter", "name=web-*"}, "web-1\nweb-2\n"},
		{[]string{"-q", "--filter", "state=stopped"}, "web-done\n"},
		{[]string{"-q", "--filter", "state=ended", "--filter", "state=running", "--filter", "name=web-*"}, "web-1\nweb-2\nweb-done\n"},
		{[]string{"-q", "--filter", "name=web-*", "--filter", "pool=p"}, "web-2\n"},
		{[]string{"--all", "--filter", "name=web-d*", "--format", `{{.name}}\t{{.state}}\t{{.exit.code}}|{{.main_pid}}|`}, "web-done\tstopped\t4||\n"},
	} {
		code, out, stderr := tetherIn(t, xdg, nil, append([]string{"ls"}, c.args...)...)
		if code != 0 || out != c.want {
			t.Errorf("tether ls %s = %d, %q (%s), want %q", strings.Join(c.args, " "), code, out, stderr, c.want)
		}
	}
	code, out, _ := tetherIn(t, xdg, nil, "ls", "--format", "json", "--filter", "name=api")
	var s session.Status
	if err := json.Unmarshal([]byte(out), &s); code != 0 || err != nil || s.Name != "api" || s.MainPID <= 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("tether ls --format json --filter name=api = %d, %q (%v), want one JSON line of api", code, out, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--filter", "color=red"}, `no key "color"; the keys are state, name`},
		{[]string{"--filter", "state=dead"}, `no state "dead"; the states are starting, running`},
		{[]string{"--filter", "name=[web"}, "bad pattern"},
		{[]string{"--filter", "state"}, "want KEY=VALUE"},
		{[]string{"--format", "{{.name"}, `--format: "{{" without "}}"`},
		{[]string{"--format", "{{.name | upper}}"}, "only fields are taken"},
		{[]string{"--format", "{{.nosuch}}"}, `no field "nosuch"; the fields are --json's: `},
		{[]string{"-q", "--json"}, "none of the others can be"},
	} {
		code, out, stderr := tetherIn(t, xdg, nil, append([]string{"ls"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("tether ls %s = %d, %q (%s), want exit 2 saying %q", strings.Join(c.args, " "), code, out, stderr, c.want)
		}
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "api", "web-1", "web-2"); code != 0 {
		t.Fatalf("tether stop = %d: %s", code, stderr)
	}
	assertNoSurvivors(t)
}
