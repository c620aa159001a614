package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/registry"
)

// FuzzSessionName: any name, and any pool, goes through a real start →
// ls → status → reap → stop in a private state dir (issue 15). A name
// the policy refuses is refused by start with exit 2 and one line, and
// nothing is created; one it accepts is listed, reachable, never taken by
// reap for stale or orphaned while alive, and stopped leaving nothing.
// Each iteration runs one `sleep 1000` session, owned by the test process:
// `go test -fuzz` kills a worker that has not answered 1–2 s after the
// fuzz time ends, mid-iteration and before any t.Cleanup, and the owner's
// death is what then stops its session before the coordinator's leak
// check (which waits a second for marked processes to end).
func FuzzSessionName(f *testing.F) {
	for _, s := range [][2]string{
		{"web", ""}, {".h2", ""}, {"-x", ""}, {"--", ""}, {"x.json", "p"}, {"a.log.1", ""}, {"0", "0"}, {"_x", ""}, {"a/b", ""},
		{"..", ""}, {".", ""}, {"a b", ""}, {"a\nb", ""}, {"ä", ""}, {strings.Repeat("n", 64), ""}, {strings.Repeat("n", 65), ""},
		{"web", ".p"}, {"web", "-p"}, {"x.tmp123", ""}, {"quarantine", "records"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, pool string) {
		if strings.IndexByte(name, 0) >= 0 || strings.IndexByte(pool, 0) >= 0 {
			t.Skip("argv cannot hold NUL")
		}
		xdg := stateEnv(t)
		args := []string{"start", "-q", "--name", name, "--owner", strconv.Itoa(os.Getpid())}
		if pool != "" {
			args = append(args, "--pool", pool, "--max", "1")
		}
		code, out, stderr := tetherIn(t, xdg, nil, append(args, "--", "sleep", "1000")...)
		// An empty --name asks for a generated one.
		bad := (name != "" && registry.CheckName(name) != nil) || (pool != "" && registry.CheckPool(pool) != nil)
		if bad {
			if code != 2 || !strings.Contains(stderr, "bad name") && !strings.Contains(stderr, "use 1–64") || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("tether start --name %q --pool %q = %d, %q; want 2 and one line", name, pool, code, stderr)
			}
			for _, d := range []string{"records", "ended", "s", "logs"} {
				if ents, _ := os.ReadDir(filepath.Join(xdg, "tether", d)); len(ents) > 0 {
					t.Errorf("refused name %q left %s/%v", name, d, ents)
				}
			}
			assertNoSurvivors(t)
			return
		}
		if name == "" {
			name = strings.TrimSpace(out)
			if registry.CheckName(name) != nil {
				t.Fatalf("tether start generated %q, outside the name policy", name)
			}
		}
		if code != 0 || strings.TrimSpace(out) != name {
			t.Fatalf("tether start --name %q = %d, %q, %q", name, code, out, stderr)
		}
		code, out, stderr = tetherIn(t, xdg, nil, "ls", "--json")
		var ls struct {
			Sessions []struct{ Name, State string }
		}
		if code != 0 || json.Unmarshal([]byte(out), &ls) != nil || len(ls.Sessions) != 1 || ls.Sessions[0].Name != name || ls.Sessions[0].State != registry.StateRunning {
			t.Fatalf("tether ls --json = %d, %s, %s; want %q running", code, out, stderr, name)
		}
		s := statusOf(t, xdg, name)
		if s.Procs != 1 {
			t.Errorf("tether status %q: %d procs, want 1", name, s.Procs)
		}
		assertReapLeavesAlone(t, xdg, []string{name}, map[string]bool{s.Cgroup: true})
		if code, _, stderr := tetherIn(t, xdg, nil, "stop", "--grace", "0", "--", name); code != 0 {
			t.Fatalf("tether stop %q = %d: %s", name, code, stderr)
		}
		assertNoSurvivors(t)
		if ents, _ := os.ReadDir(filepath.Join(xdg, "tether", "s")); len(ents) > 0 {
			t.Errorf("runtime dirs left after stop: %v", ents)
		}
	})
}

// FuzzArgv runs tether with any argv, in-process as the real binary would
// (the test binary as tether) in a private state dir and working
// directory, with a PATH that holds only `true` and every argument that
// names a path replaced by "true": whatever the fuzzer writes, the only
// command that can run is true (issue 15). Every argv ends in a known
// exit code, with a "tether: " line on stderr when it fails, never a
// panic; and once it returns, every session it started ends by itself,
// leaving no process, record of a live session or runtime dir.
func FuzzArgv(f *testing.F) {
	for _, s := range []string{
		"run\x00--\x00true", "start\x00--name\x00w\x00--\x00true", "start\x00--name\x00.h2\x00--\x00true", "start\x00--name\x00-x\x00--\x00true",
		"start\x00--name\x00--\x00--\x00true", "start\x00--pool\x00p\x00--max\x001\x00--until\x00empty\x00--\x00true", "ls\x00--json\x00--all",
		"status\x00w", "stop\x00--all", "reap\x00--dry-run\x00--json", "logs\x00-n\x003\x00w", "wait\x00w", "exec\x00w\x00--\x00true", "env\x00w\x00--json",
		"run\x00--timeout\x009223372036.854775807\x00--\x00true", "run\x00--cpus\x001e300\x00--\x00true", "run\x00--memory\x008E\x00--\x00true",
		"start\x00--ttl\x00-1\x00--\x00true", "run\x00-e\x00A\x00--\x00true", "run\x00--receipt\x00-\x00--\x00true", "--bogus", "", "help\x00run",
		"completion\x00bash", "__complete\x00stop\x00", "run\x00--signal\x0099\x00--\x00true", "start\x00--owner\x00session:.x\x00--\x00true",
		"run\x00--\x00nosuch", "__supervise\x00--state\x00x\x00--\x00w",
	} {
		f.Add(s)
	}
	bin := f.TempDir()
	if err := os.Symlink("/bin/true", filepath.Join(bin, "true")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		args := strings.Split(in, "\x00")
		if in == "" {
			args = nil
		}
		for i, a := range args {
			if strings.Contains(a, "/") || a == "doctor" {
				args[i] = "true" // doctor probes the host: slow, and not an input boundary
			}
		}
		xdg := stateEnv(t)
		cmd, stdout, stderr := tetherCmd(t, args...)
		cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR", "PATH"), "XDG_RUNTIME_DIR="+xdg, "PATH="+bin)
		cmd.Dir = t.TempDir()
		code := wait(t, cmd)
		switch code {
		case 0, 1, 2, 124, 125, 126, 127:
		default:
			t.Errorf("tether %q = exit %d, want 0, 1, 2 or 124–127; stderr %q", args, code, stderr)
		}
		if e := stderr.String(); strings.Contains(e, "panic") || strings.Contains(e, "goroutine ") {
			t.Fatalf("tether %q panicked: %s", args, e)
		}
		if code != 0 && !strings.Contains(stderr.String(), "tether: ") && (len(args) == 0 || args[0] != "exec") {
			t.Errorf("tether %q = exit %d with stderr %q, want a \"tether: \" line", args, code, stderr)
		}
		_ = stdout
		awaitAllEnded(t, xdg, args)
		assertNoSurvivors(t)
	})
}

// awaitAllEnded waits (bounded) for every session of the state dir under
// xdg to end by itself — its command is true — and its supervisor to
// exit, and fails t if one stays live or leaves a runtime dir: a
// half-created session. (A supervisor whose start failed reports first
// and records the failure after: it exits a moment after tether start.)
func awaitAllEnded(t *testing.T, xdg string, args []string) {
	t.Helper()
	state := filepath.Join(xdg, "tether")
	var left []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		left = nil
		for _, d := range []string{"records", "s"} {
			ents, _ := os.ReadDir(filepath.Join(state, d))
			for _, e := range ents {
				left = append(left, d+"/"+e.Name())
			}
		}
		for pid, argv := range marked(marker(t)) {
			left = append(left, fmt.Sprintf("pid %d %q", pid, argv))
		}
		if len(left) == 0 {
			return
		}
	}
	t.Errorf("tether %q: %v left 20s after it returned; want every session of true ended and swept", args, left)
}
