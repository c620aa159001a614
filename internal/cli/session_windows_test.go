package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/internal/testuser"
)

// Windows sessions through the real CLI under Wine (or Windows): a
// supervisor started detached holds the session's job; `tether stop`
// wakes it by its named event; its death takes the job with it, and
// `tether reap` cleans the record. The session's command is the tree
// helper (this binary, marked with the test's tag).

// startArgs is `tether start` of the tree helper, marked for t. The
// session is killed when t ends if it is still there (a failed test must
// not leak it: a supervisor's command line carries no tag).
func startArgs(t *testing.T, name, dir, then string, extra ...string) []string {
	t.Cleanup(func() {
		if s := sessionIn(lsJSON(t, false), name); s != nil {
			tether(t, "stop", "--kill", name)
		}
	})
	exe, _ := os.Executable()
	args := []string{"start", "--name", name, "-e", asTetherEnv + "=0", "-e", helperEnv + "=tree", "--", exe, wineTag(t), dir, then}
	return append(args, extra...)
}

// awaitFile waits, under the hang guard, for dir/name to exist.
func awaitFile(t *testing.T, dir, name string) {
	t.Helper()
	for deadline := time.Now().Add(runDeadline); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", name)
		}
	}
}

// lsJSON is `tether ls --json`, decoded.
func lsJSON(t *testing.T, all bool) []map[string]any {
	t.Helper()
	args := []string{"ls", "--json"}
	if all {
		args = append(args, "--all")
	}
	code, out, stderr := tether(t, args...)
	if code != 0 {
		t.Fatalf("tether ls = %d: %s", code, stderr)
	}
	var got struct {
		Sessions []map[string]any `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("ls --json: %v\n%s", err, out)
	}
	return got.Sessions
}

// sessionIn returns the entry of ls for name (nil if none).
func sessionIn(ls []map[string]any, name string) map[string]any {
	for _, s := range ls {
		if s["name"] == name {
			return s
		}
	}
	return nil
}

// TestWindowsSessionStop: the leak matrix's trees, started as sessions,
// are all gone after `tether stop`, whose receipt confirms the stop; the
// caller (tether start) has exited long before, and the session's
// breakaway attempt was refused.
func TestWindowsSessionStop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
	}{{"child", nil}, {"breakaway", []string{"breakaway"}}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testuser.TempDir(t)
			name := "win-stop-" + tc.name
			code, _, stderr := tether(t, startArgs(t, name, dir, "stay", tc.extra...)...)
			if code != 0 {
				t.Fatalf("tether start = %d: %s", code, stderr)
			}
			awaitFile(t, dir, "sleeper")
			if _, err := os.Stat(filepath.Join(dir, "brokeaway")); err == nil {
				t.Fatal("a session's child broke away from its job")
			}
			s := sessionIn(lsJSON(t, false), name)
			if s == nil || s["state"] != "running" || s["supervised"] != true || s["mechanism"] != "job-object" || s["caveats"] != nil {
				t.Fatalf("ls: %v; want running, supervised, job-object, no caveats (started out of the caller's job)", s)
			}
			live := liveMarked(t)
			if len(live) < 2 {
				t.Errorf("before the stop: %d marked processes, want >= 2 (main, sleeper): the check could not see a leak", len(live))
			}
			// ls reads the job through its name: every process in it,
			// and their commit charge. (CPU time: Wine's job accounting
			// has none.)
			procs, _ := s["procs"].(float64)
			mem, _ := s["memory_bytes"].(float64)
			if int(procs) != len(live) || mem <= 0 || s["memory_source"] != "commit charge" {
				t.Errorf("ls: procs %v memory %v (%v); want %d processes and their commit charge", s["procs"], s["memory_bytes"], s["memory_source"], len(live))
			}
			// status --processes lists the job's processes: pid, parent, image.
			_, sout, _ := tether(t, "status", "--json", name)
			var st struct {
				Processes []struct {
					PID, PPID int
					Argv      []string
				} `json:"processes"`
			}
			json.Unmarshal([]byte(sout), &st)
			if len(st.Processes) != len(live) {
				t.Errorf("status: processes %+v; want the %d in the job", st.Processes, len(live))
			}
			for _, p := range st.Processes {
				if p.PID == 0 || p.PPID == 0 || len(p.Argv) != 1 || !strings.HasSuffix(strings.ToLower(p.Argv[0]), ".exe") {
					t.Errorf("status: process %+v; want pid, parent and image", p)
				}
			}
			code, out, stderr := tether(t, "stop", "--json", name)
			if code != 0 {
				t.Fatalf("tether stop = %d: %s %s", code, out, stderr)
			}
			var res struct {
				Receipts []struct {
					StopConfirmed bool   `json:"stop_confirmed"`
					Mechanism     string `json:"mechanism"`
					Job           struct {
						TotalProcesses  int `json:"total_processes"`
						ActiveProcesses int `json:"active_processes"`
					} `json:"job"`
				} `json:"receipts"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Receipts) != 1 {
				t.Fatalf("stop --json: %v\n%s", err, out)
			}
			if r := res.Receipts[0]; !r.StopConfirmed || r.Mechanism != "job-object" || r.Job.TotalProcesses < 2 || r.Job.ActiveProcesses != 0 {
				t.Errorf("receipt %+v; want confirmed, job-object, >= 2 processes ever, 0 active", r)
			}
			checkNoSurvivors(t)
			if s := sessionIn(lsJSON(t, true), name); s == nil || s["state"] != "stopped" {
				t.Errorf("ls --all after the stop: %v; want stopped", s)
			}
		})
	}
}

// TestWindowsSessionSupervisorKilled: the supervisor dies (killed through
// its handle: TerminateProcess, as a crash); KILL_ON_JOB_CLOSE ends the
// session's tree; ls calls it unsupervised, and reap proves the
// supervisor and main dead by their tokens and cleans the record.
func TestWindowsSessionSupervisorKilled(t *testing.T) {
	dir := testuser.TempDir(t)
	name := "win-killed"
	if code, _, stderr := tether(t, startArgs(t, name, dir, "stay")...); code != 0 {
		t.Fatalf("tether start = %d: %s", code, stderr)
	}
	awaitFile(t, dir, "sleeper")
	reg, err := store.Open(os.Getenv("TETHER_STATE_DIR"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := reg.Read(name)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := identity.Parse(rec.Supervisor)
	if err != nil {
		t.Fatal(err)
	}
	h, err := identity.Open(tok)
	if err != nil {
		t.Fatal(err)
	}
	if live := liveMarked(t); len(live) < 2 {
		t.Errorf("before the kill: %d marked processes, want >= 2 (main, sleeper)", len(live))
	}
	if err := h.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitExit(runDeadline)
	h.Close()
	checkNoSurvivors(t)
	if s := sessionIn(lsJSON(t, false), name); s == nil || s["state"] != "unsupervised" {
		t.Fatalf("ls after the supervisor's death: %v; want unsupervised", s)
	}
	code, out, stderr := tether(t, "reap", "--json")
	if code != 0 || !strings.Contains(out, `"dead-supervisor-empty"`) {
		t.Fatalf("tether reap = %d: %s %s; want %s reaped as dead-supervisor-empty", code, out, stderr, name)
	}
	if s := sessionIn(lsJSON(t, true), name); s == nil || s["state"] != "stopped" || s["stop_reason"] != "supervisor-died" {
		t.Errorf("ls --all after reap: %v; want stopped, supervisor-died (as on Linux)", s)
	}
	if _, err := os.Lstat(reg.RuntimeDir(name)); !os.IsNotExist(err) {
		t.Errorf("runtime dir after reap: %v; want removed", err)
	}
}

// TestWindowsSessionMainExit: the main process exits with 3, leaving a
// child; the session ends on its own (until main-exit), the child is
// stopped, and `tether wait` returns the main's code.
func TestWindowsSessionMainExit(t *testing.T) {
	dir := testuser.TempDir(t)
	name := "win-exit"
	if code, _, stderr := tether(t, startArgs(t, name, dir, "3")...); code != 0 {
		t.Fatalf("tether start = %d: %s", code, stderr)
	}
	code, out, stderr := tether(t, "wait", name)
	if code != 3 {
		t.Errorf("tether wait = %d, want the main's 3: %s %s", code, out, stderr)
	}
	checkNoSurvivors(t)
}

// TestWindowsSessionLogs: what the session's command writes on stdout and
// stderr is in its log, by stream (`tether logs --json`), and `tether logs
// -f` follows it until the session is stopped, then returns.
func TestWindowsSessionLogs(t *testing.T) {
	dir := testuser.TempDir(t)
	name := "win-logs"
	exe, _ := os.Executable()
	args := []string{"start", "--name", name, "-e", asTetherEnv + "=0", "-e", helperEnv + "=say", "--", exe, wineTag(t), dir, "stay"}
	t.Cleanup(func() {
		if s := sessionIn(lsJSON(t, false), name); s != nil {
			tether(t, "stop", "--kill", name)
		}
	})
	if code, _, stderr := tether(t, args...); code != 0 {
		t.Fatalf("tether start = %d: %s", code, stderr)
	}
	want := map[string]string{"hello from stdout": "stdout", "hello from stderr": "stderr"}
	var out string
	for deadline := time.Now().Add(runDeadline); ; time.Sleep(20 * time.Millisecond) {
		var code int
		code, out, _ = tether(t, "logs", "--json", name)
		if code == 0 && strings.Contains(out, "hello from stdout") && strings.Contains(out, "hello from stderr") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tether logs --json never showed both lines: %q", out)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct{ Stream, Line string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("logs --json line %q: %v", line, err)
		}
		if s, ok := want[e.Line]; ok && s != e.Stream {
			t.Errorf("%q on stream %q, want %q", e.Line, e.Stream, s)
		}
	}
	follow, fout, _ := tetherCmd(t, "logs", "-f", name)
	if err := startCmd(follow); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(runDeadline); !strings.Contains(fout.String(), "hello from stderr"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tether logs -f printed %q", fout.String())
		}
	}
	if code, _, stderr := tether(t, "stop", name); code != 0 {
		t.Fatalf("tether stop = %d: %s", code, stderr)
	}
	if code := wait(t, follow); code != 0 {
		t.Errorf("tether logs -f = exit %d after the stop, want 0", code)
	}
	checkNoSurvivors(t)
}

// TestWindowsSessionInCallerJob: a session started where the caller's job
// forbids breakaway (inside tether run) is started in that job, says so
// when it starts, and ends with the job: nothing of it outlives the run,
// and reap cleans its record.
func TestWindowsSessionInCallerJob(t *testing.T) {
	dir := testuser.TempDir(t)
	name := "win-injob"
	exe, _ := os.Executable()
	code, _, stderr := tether(t, append([]string{"run", "--", exe}, startArgs(t, name, dir, "stay")...)...)
	if code != 0 {
		t.Fatalf("tether run -- tether start = %d: %s", code, stderr)
	}
	if want := `note: session "` + name + `" started inside its caller's job`; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q does not say %q", stderr, want)
	}
	checkNoSurvivors(t)
	if code, out, stderr := tether(t, "reap", "--json"); code != 0 || !strings.Contains(out, `"`+name+`"`) {
		t.Errorf("tether reap = %d: %s %s; want %s reaped", code, out, stderr, name)
	}
	if s := sessionIn(lsJSON(t, false), name); s != nil {
		t.Errorf("ls after reap: %v; want it gone", s)
	}
}

// TestWindowsSessionExec: tether exec runs a command in a session's job,
// through the supervisor's named pipe, with the caller's stdin, stdout
// and stderr and its exit code; what the command leaves behind is the
// session's, listed with it and ended by its stop; an ended session
// refuses.
func TestWindowsSessionExec(t *testing.T) {
	dir, execDir := testuser.TempDir(t), testuser.TempDir(t)
	name := "win-exec"
	if code, _, stderr := tether(t, startArgs(t, name, dir, "stay")...); code != 0 {
		t.Fatalf("tether start = %d: %s", code, stderr)
	}
	awaitFile(t, dir, "sleeper")
	exe, _ := os.Executable()
	helper := func(h string, args ...string) []string {
		return append([]string{"exec", name, "--", "cmd", "/c", "set", asTetherEnv + "=0&&set", helperEnv + "=" + h + "&&", exe, wineTag(t)}, args...)
	}

	cmd, out, errOut := tetherCmd(t, helper("say", execDir, "0")...)
	if code := wait(t, cmd); code != 0 || out.String() != "hello from stdout\r\n" && out.String() != "hello from stdout\n" || !strings.Contains(errOut.String(), "hello from stderr") {
		t.Errorf("tether exec say = %d, stdout %q, stderr %q; want 0 and each line on its stream", code, out, errOut)
	}
	cmd, _, errOut = tetherCmd(t, helper("tree", execDir, "7")...)
	if code := wait(t, cmd); code != 7 {
		t.Errorf("tether exec tree 7 = %d, want the command's 7: %s", code, errOut)
	}
	awaitFile(t, execDir, "sleeper") // left by the exec'd tree, in the session
	s := sessionIn(lsJSON(t, false), name)
	if procs, _ := s["procs"].(float64); procs < 3 {
		t.Errorf("ls: %v processes in the session, want >= 3 (its tree and the exec'd sleeper)", s["procs"])
	}
	if code, out, stderr := tether(t, "stop", name); code != 0 {
		t.Fatalf("tether stop = %d: %s %s", code, out, stderr)
	}
	checkNoSurvivors(t)
	code, _, stderr := tether(t, "exec", name, "--", exe)
	if code != 125 || !strings.Contains(stderr, "has ended") {
		t.Errorf("tether exec in an ended session = %d %q, want 125 and has ended", code, stderr)
	}
}

// TestWindowsReapQuarantine: a corrupt record is moved to quarantine/
// with the reason beside it, as on Linux; nothing is deleted.
func TestWindowsReapQuarantine(t *testing.T) {
	dir := os.Getenv("TETHER_STATE_DIR")
	if _, err := store.Open(dir); err != nil {
		t.Fatal(err)
	}
	name := "win-corrupt"
	bad := filepath.Join(dir, "records", name+".json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(bad)
	code, out, stderr := tether(t, "reap", "--json")
	if code != 0 || !strings.Contains(out, `"corrupt"`) {
		t.Fatalf("tether reap = %d: %s %s; want %s quarantined as corrupt", code, out, stderr, name)
	}
	if _, err := os.Lstat(bad); !os.IsNotExist(err) {
		t.Errorf("the corrupt record is still in records/: %v", err)
	}
	q, _ := filepath.Glob(filepath.Join(dir, "quarantine", name+".json.*"))
	var reason string
	for _, p := range q {
		if strings.HasSuffix(p, ".reason") {
			b, _ := os.ReadFile(p)
			reason = string(b)
		}
		defer os.Remove(p)
	}
	if len(q) != 2 || reason == "" {
		t.Errorf("quarantine holds %v (reason %q); want the record and its reason", q, reason)
	}
}
