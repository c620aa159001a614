package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/registry"
)

// TestNamePolicyRefused: every entry that takes a session or pool name
// refuses one outside the policy (issue 15: `.h2` made an invisible session
// that reap swept; `-x` and `--` killed the supervisor, leaving a failed
// record and a pointer to a log that did not exist) with exit 2 (125 for
// exec) and one line naming it, before anything is created: no record, no
// runtime dir, no process.
func TestNamePolicyRefused(t *testing.T) {
	xdg := stateEnv(t)
	started := filepath.Join(t.TempDir(), "started")
	cmd := []string{"--", "touch", started}
	tests := []struct {
		args []string
		code int
		want string
	}{
		{append([]string{"start", "--name", ".h2"}, cmd...), 2, `session ".h2": bad name`},
		{append([]string{"start", "--name", "-x"}, cmd...), 2, `session "-x": bad name`},
		{append([]string{"start", "--name", "--"}, cmd...), 2, `session "--": bad name`},
		{append([]string{"start", "--name=-"}, cmd...), 2, `session "-": bad name`},
		{append([]string{"start", "--name", "_x"}, cmd...), 2, `session "_x": bad name`},
		{append([]string{"start", "--name", strings.Repeat("x", 65)}, cmd...), 2, "bad name"},
		{append([]string{"start", "--name", "a\nb"}, cmd...), 2, `session "a\nb": bad name`},
		{append([]string{"start", "--pool", ".p", "--max", "1"}, cmd...), 2, `pool ".p"`},
		{append([]string{"start", "--pool", "-p", "--max", "1"}, cmd...), 2, `pool "-p"`},
		{append([]string{"start", "--owner", "session:.h2"}, cmd...), 2, `session ".h2": bad name`},
		{[]string{"status", ".h2"}, 2, `session ".h2": bad name`},
		{[]string{"logs", ".h2"}, 2, `session ".h2": bad name`},
		{[]string{"wait", ".h2"}, 2, `session ".h2": bad name`},
		{[]string{"env", ".h2"}, 2, `session ".h2": bad name`},
		{[]string{"stop", "ok", ".h2"}, 2, `session ".h2": bad name`},
		{[]string{"stop", "--", "-x"}, 2, `session "-x": bad name`},
		{[]string{"status", "--", "--"}, 2, `session "--": bad name`},
		{[]string{"exec", ".h2", "--", "touch", started}, 125, `session ".h2": bad name`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := tetherIn(t, xdg, nil, tt.args...)
			if code != tt.code || !strings.HasPrefix(stderr, "tether: ") || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("tether %q = %d, stdout %q, stderr %q; want %d and one line with %q", tt.args, code, stdout, stderr, tt.code, tt.want)
			}
		})
	}
	if exists(started) {
		t.Error("a command ran")
	}
	state := filepath.Join(xdg, "tether")
	for _, d := range []string{"records", "ended", "s", "logs", "receipts"} {
		if ents, _ := os.ReadDir(filepath.Join(state, d)); len(ents) > 0 {
			t.Errorf("%s/ holds %v after refused names; want nothing created", d, ents)
		}
	}
	assertNoSurvivors(t)
}

// TestNamePolicyEdges: names at the edges of the policy, among them the
// shapes that collide with the registry's own file names (x.json, a.log.1,
// digits only), are listed, reachable, never taken by reap for stale or
// orphaned while alive, and stopped leaving nothing.
func TestNamePolicyEdges(t *testing.T) {
	xdg := stateEnv(t)
	names := []string{"0", "a.", "z-", "x.json", "a.log.1", "a..b", strings.Repeat("N", registry.MaxName)}
	for _, n := range names {
		if got := mustStart(t, xdg, nil, "-q", "--name", n, "--", "sleep", "1000"); got != n {
			t.Fatalf("tether start --name %s printed %q", n, got)
		}
	}
	code, out, stderr := tetherIn(t, xdg, nil, "ls", "--json")
	if code != 0 {
		t.Fatalf("tether ls = %d: %s", code, stderr)
	}
	var ls struct {
		Sessions []struct{ Name, State string }
	}
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, s := range ls.Sessions {
		listed[s.Name] = s.State
	}
	leaves := map[string]bool{}
	for _, n := range names {
		if listed[n] != registry.StateRunning {
			t.Errorf("tether ls: %s is %q, want running", n, listed[n])
		}
		if s := statusOf(t, xdg, n); s.Name != n || s.Procs != 1 {
			t.Errorf("tether status %s = %s with %d procs, want it with 1", n, s.Name, s.Procs)
		} else {
			leaves[s.Cgroup] = true
		}
	}
	assertReapLeavesAlone(t, xdg, names, leaves)
	args := append([]string{"stop", "--grace", "0"}, names...)
	if code, _, stderr := tetherIn(t, xdg, nil, args...); code != 0 {
		t.Fatalf("tether stop = %d: %s", code, stderr)
	}
	assertNoSurvivors(t)
	if ents, _ := os.ReadDir(filepath.Join(xdg, "tether", "s")); len(ents) > 0 {
		t.Errorf("runtime dirs left after stop: %v", ents)
	}
}

// assertReapLeavesAlone runs tether reap --dry-run and fails t when it
// plans anything but "supervised" for the live sessions names, reports a
// stale dir, or takes one of their leaves for an orphan. (Leaves of other
// tests and state dirs under the same parent are orphans to this state
// dir, rightly: they are not considered.)
func assertReapLeavesAlone(t *testing.T, xdg string, names []string, leaves map[string]bool) {
	t.Helper()
	code, out, stderr := tetherIn(t, xdg, nil, "reap", "--dry-run", "--json")
	if code != 0 {
		t.Fatalf("tether reap --dry-run = %d: %s", code, stderr)
	}
	var rep reap.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, n := range names {
		live[n] = true
	}
	for _, a := range rep.Actions {
		if a.Class != reap.Supervised || !live[a.Name] {
			t.Errorf("reap plans %s for %q (%s), want only supervised live sessions", a.Class, a.Name, a.Plan)
		}
	}
	for _, ol := range rep.OrphanLeaves {
		if !leaves[ol.Path] {
			continue
		}
		t.Errorf("reap reports an orphan leaf %s (%d procs) beside live sessions", ol.Path, ol.Procs)
	}
}
