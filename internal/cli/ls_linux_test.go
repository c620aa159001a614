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
