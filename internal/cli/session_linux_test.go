package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/watch"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// stateEnv gives a test its own registry: XDG_RUNTIME_DIR in a private
// temp dir. Cleanup stops whatever the test left running.
func stateEnv(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	t.Cleanup(func() {
		reg, err := store.Open(filepath.Join(dir, "tether"))
		if err != nil {
			return
		}
		client, err := session.Open(reg.Dir)
		if err != nil {
			return
		}
		defer client.Close()
		recs, _ := reg.List()
		for _, r := range recs {
			if r.Live() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := client.Stop(ctx, r.Name, session.StopOptions{Kill: true})
				cancel()
				if err != nil {
					reap.Run(reg, reap.Options{})
				}
			}
		}
		reg.Close()
		awaitWatcherGone(t, filepath.Join(dir, "tether"))
	})
	return dir
}

// awaitWatcherGone waits (up to 10 s) for the owner-death watcher of the
// state dir to exit. It outlives the supervisors it served by a moment
// (the tests' linger is 0), and may still be creating or removing its
// socket there: the temp dir's removal then fails with "directory not
// empty" (seen in CI's FuzzArgv).
func awaitWatcherGone(t *testing.T, state string) {
	t.Helper()
	if left := leakcheck.AwaitGone(watch.Env, state, 10*time.Second); len(left) > 0 {
		t.Errorf("the watcher of %s did not exit: %v", state, left)
	}
}

// tetherIn runs tether with XDG_RUNTIME_DIR=xdg and extra environment.
func tetherIn(t *testing.T, xdg string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd, stdout, stderr := tetherCmd(t, args...)
	cmd.Env = append(append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg), env...)
	code := wait(t, cmd)
	return code, stdout.String(), stderr.String()
}

func statusOf(t *testing.T, xdg, name string) session.Status {
	t.Helper()
	code, out, stderr := tetherIn(t, xdg, nil, "status", "--json", name)
	if code != 0 {
		t.Fatalf("tether status %s = %d: %s", name, code, stderr)
	}
	var s session.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status JSON: %v\n%s", err, out)
	}
	return s
}

// awaitState polls the session's state (the supervisor acts within a
// second; the bound here is generous and not a timing assertion).
func awaitState(t *testing.T, xdg, name, want string) (session.Status, time.Duration) {
	t.Helper()
	t0 := time.Now()
	reg, err := store.Open(filepath.Join(xdg, "tether"))
	if err != nil {
		t.Fatal(err)
	}
	for time.Since(t0) < 20*time.Second {
		if rec, err := reg.Read(name); err == nil {
			if s := session.StatusOf(rec); s.State == want {
				took := time.Since(t0)
				if !rec.Live() {
					awaitSupervisorExit(t, xdg, name)
				}
				return s, took
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	s := statusOf(t, xdg, name)
	t.Fatalf("session %s state = %s, want %s", name, s.State, want)
	return s, 0
}

func mustStart(t *testing.T, xdg string, env []string, args ...string) string {
	t.Helper()
	code, out, stderr := tetherIn(t, xdg, env, append([]string{"start"}, args...)...)
	if code != 0 {
		t.Fatalf("tether start %s = %d: %s", strings.Join(args, " "), code, stderr)
	}
	return strings.TrimSpace(out)
}

// TestSessionTmuxOutlivesScratch: a tmux server started in a session with
// a scratch TMPDIR stays listed and reachable after the scratch is
// deleted, and tether stop leaves no tmux process. It is started as the
// docs show, with no --until: the profile's default is empty, so the
// session outlives the tmux client that started the server.
func TestSessionTmuxOutlivesScratch(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skipf("tmux not installed: %v", err)
	}
	xdg := stateEnv(t)
	scratch, _ := os.MkdirTemp("", "scratch-")
	name := mustStart(t, xdg, []string{"TMPDIR=" + scratch}, "--name", "tm", "--profile", "tmux", "--",
		"tmux", "-f", "/dev/null", "new-session", "-d", "-s", "work", "sleep 1000")
	os.RemoveAll(scratch)
	s, _ := awaitState(t, xdg, name, registry.StateRunning)
	if s.Until != session.UntilEmpty {
		t.Errorf("until = %q with --profile tmux and no --until, want %q", s.Until, session.UntilEmpty)
	}
	var err error
	// tether start returns once the command runs; the tmux client may
	// still be creating its server.
	var out []byte
	for range 200 {
		tm := exec.Command("tmux", "ls")
		tm.Env = append(os.Environ(), "TMUX_TMPDIR="+filepath.Join(s.RuntimeDir, "sock"))
		if out, err = tm.CombinedOutput(); err == nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if !strings.Contains(string(out), "work:") {
		t.Errorf("tmux ls through the session's TMUX_TMPDIR = %q, %v; want the work session", out, err)
	}
	if s := statusOf(t, xdg, name); s.Procs < 2 {
		t.Errorf("procs = %d, want the tmux server and its sleep", s.Procs)
	}
	code, stopOut, stderr := tetherIn(t, xdg, nil, "stop", "--json", name)
	if code != 0 {
		t.Fatalf("tether stop = %d: %s", code, stderr)
	}
	// The profile's stop-exec, tmux kill-server, ended the server and its
	// pane: no member was left to signal.
	var doc struct {
		Receipts []struct {
			Name          string `json:"name"`
			StopConfirmed bool   `json:"stop_confirmed"`
			Stop          struct {
				Steps []struct {
					Name     string `json:"name"`
					Observed string `json:"observed"`
				} `json:"steps"`
			} `json:"stop"`
		} `json:"receipts"`
	}
	if err := json.Unmarshal([]byte(stopOut), &doc); err != nil || len(doc.Receipts) != 1 || !doc.Receipts[0].StopConfirmed || doc.Receipts[0].Name != name ||
		len(doc.Receipts[0].Stop.Steps) < 2 || doc.Receipts[0].Stop.Steps[0].Name != "stop-exec" || !strings.Contains(doc.Receipts[0].Stop.Steps[0].Observed, "the group ended on it") {
		t.Errorf("stop receipts = %s (%v)", stopOut, err)
	}
	assertNoSurvivors(t)
	if _, err := os.Stat(s.RuntimeDir); !os.IsNotExist(err) {
		t.Errorf("runtime dir %s still exists after a confirmed stop", s.RuntimeDir)
	}
}

func TestSessionEnvironmentAndLogs(t *testing.T) {
	xdg := stateEnv(t)
	name := mustStart(t, xdg, []string{"TMPDIR=/caller/scratch", "TETHER_SESSION=forged"}, "--name", "env", "--",
		"sh", "-c", `echo "session=$TETHER_SESSION dir=$TETHER_SESSION_DIR tmp=$TMPDIR"; echo err >&2; exit 3`)
	code, _, _ := tetherIn(t, xdg, nil, "wait", name)
	if code != 3 {
		t.Errorf("tether wait = %d, want the session's exit code 3", code)
	}
	s := statusOf(t, xdg, name)
	_, logs, _ := tetherIn(t, xdg, nil, "logs", name)
	want := "session=env dir=" + s.RuntimeDir + " tmp=" + filepath.Join(s.RuntimeDir, "tmp")
	if !strings.Contains(logs, want) || !strings.Contains(logs, "err") {
		t.Errorf("logs = %q, want %q and stderr", logs, want)
	}
	if s.State != registry.StateStopped || s.StopReason != "main-exit" || s.Exit == nil || s.Exit.Code != 3 {
		t.Errorf("status = %+v", s)
	}
}

func TestSessionOwnerDeath(t *testing.T) {
	xdg := stateEnv(t)
	owner := exec.Command("sleep", "1000")
	if err := startCmd(owner); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	name := mustStart(t, xdg, nil, "--owner", strconv.Itoa(owner.Process.Pid), "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
	s := statusOf(t, xdg, name)
	if s.OwnerAlive == nil || !*s.OwnerAlive || s.State != registry.StateRunning {
		t.Fatalf("status = %+v, want running with a live owner", s)
	}
	// The receipt must see both members: sh's fork may come after the
	// start returned (a slow guest killed the owner before it).
	awaitProcs(t, xdg, name, 2)
	owner.Process.Signal(syscall.SIGKILL)
	owner.Wait()
	s, took := awaitState(t, xdg, name, registry.StateStopped)
	t.Logf("stopped %v after the owner was killed", took)
	if s.StopReason != "owner-exit" {
		t.Errorf("stop_reason = %q, want owner-exit", s.StopReason)
	}
	r, _ := readReceipt(t, s.Receipt)
	if !r.StopConfirmed || r.Evidence.MembersSeen < 2 {
		t.Errorf("receipt confirmed %t members %d", r.StopConfirmed, r.Evidence.MembersSeen)
	}
	awaitSupervisorExit(t, xdg, name)
	assertNoSurvivors(t)
}

func TestSessionFamily(t *testing.T) {
	xdg := stateEnv(t)
	parent := mustStart(t, xdg, nil, "--name", "parent", "--owner", "none", "--", "sleep", "1000")
	child := mustStart(t, xdg, nil, "--name", "child", "--owner", "session:parent", "--", "sleep", "1000")
	grand := mustStart(t, xdg, nil, "--name", "grand", "--owner", "session:child", "--", "sleep", "1000")
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", parent); code != 0 {
		t.Fatalf("stop parent = %d: %s", code, stderr)
	}
	for _, n := range []string{child, grand} {
		if s := statusOf(t, xdg, n); s.State != registry.StateStopped {
			t.Errorf("%s state = %s after its owner's stop, want stopped", n, s.State)
		}
	}
	assertNoSurvivors(t)
}

// TestSessionDefaultOwnerFromCgroup: tether start run inside a session's
// leaf gets that session as owner, from its real cgroup membership.
func TestSessionDefaultOwnerFromCgroup(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	exe, _ := os.Executable()
	outer := mustStart(t, xdg, []string{"TETHER_EXE=" + exe}, "--name", "outer", "--owner", "none", "--",
		"sh", "-c", `"$TETHER_EXE" start --name inner -- sleep 1000 >/dev/null; sleep 1000`)
	s, _ := awaitState(t, xdg, "inner", registry.StateRunning)
	if s.Owner != "session:"+outer {
		t.Errorf("inner owner = %q, want session:%s", s.Owner, outer)
	}
	// tether ls run inside the outer session's leaf shows its family only.
	mustStart(t, xdg, nil, "--name", "other", "--owner", "none", "--", "sleep", "1000")
	leaf := statusOf(t, xdg, outer).Cgroup
	fd, err := syscall.Open(leaf, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ls, lsOut, _ := tetherCmd(t, "ls", "--json")
	ls.Env = append(withoutEnv(ls.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg, "TETHER_SESSION="+outer)
	ls.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	code := wait(t, ls)
	syscall.Close(fd)
	var doc struct {
		Sessions []struct{ Name string } `json:"sessions"`
	}
	json.Unmarshal(lsOut.Bytes(), &doc)
	var names []string
	for _, x := range doc.Sessions {
		names = append(names, x.Name)
	}
	if code != 0 || strings.Join(names, ",") != "inner,outer" {
		t.Errorf("tether ls inside %s = %d, %v; want its family [inner outer]", outer, code, names)
	}
	tetherIn(t, xdg, nil, "stop", outer, "other")
	if s := statusOf(t, xdg, "inner"); s.State != registry.StateStopped {
		t.Errorf("inner state = %s after outer stopped", s.State)
	}
	assertNoSurvivors(t)
}

// TestSessionSupervisorKilled: with its supervisor SIGKILLed, the workload
// stays contained in its leaf and ls marks the session unsupervised.
func TestSessionSupervisorKilled(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	// Without the watcher of its death (issue 24; TestOwnerDeathSession
	// in reap tests it), which would stop the session at once: the
	// session is left unsupervised, as when the watcher was killed too.
	name := mustStart(t, xdg, []string{"TETHER_NO_WATCH=1"}, "--owner", "none", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
	// Both sleeps exist before the supervisor dies: its death takes sh
	// (parent-death signal), and a sleep not yet forked never would be.
	awaitProcs(t, xdg, name, 3)
	killSupervisor(t, xdg, name)
	s := statusOf(t, xdg, name)
	if s.State != "unsupervised" || s.Procs < 2 {
		t.Errorf("after SIGKILL of the supervisor: state %s procs %d; want unsupervised with its 2+ members still in the leaf", s.State, s.Procs)
	}
	_, out, _ := tetherIn(t, xdg, nil, "ls")
	if !strings.Contains(out, "unsupervised") {
		t.Errorf("tether ls = %q, want unsupervised", out)
	}
	// tether stop stops what it can prove is the session's, supervised
	// or not (issue 24): the leaf, held anew by its recorded cgroup id.
	r := stopWithin(t, xdg, "--grace", "1s", name)
	if !r.StopConfirmed || r.Stop.Reason != "request" || r.Evidence.MembersSeen < 2 || r.Cgroup == nil || !r.Cgroup.Removed {
		t.Errorf("tether stop of an unsupervised session: confirmed %t, reason %q, evidence %+v, cgroup %+v; want confirmed, request, its 2+ members, the leaf removed",
			r.StopConfirmed, r.Stop.Reason, r.Evidence, r.Cgroup)
	}
	if s := statusOf(t, xdg, name); s.State != "stopped" {
		t.Errorf("after tether stop: state %s, want stopped", s.State)
	}
	assertNoSurvivors(t)
	if code, out, stderr := tetherIn(t, xdg, nil, "stop", name); code != 0 {
		t.Errorf("tether stop again = %d, %q %q; want 0 and the same receipt", code, out, stderr)
	}
}

// awaitProcs waits until session name has n processes in its leaf: a test
// that kills the supervisor first must not race the workload's forks.
func awaitProcs(t *testing.T, xdg, name string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); statusOf(t, xdg, name).Procs < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("session %s never had its %d processes: %+v", name, n, statusOf(t, xdg, name))
		}
	}
}

// killSupervisor SIGKILLs a session's supervisor through a verified pidfd.
func killSupervisor(t *testing.T, xdg, name string) {
	t.Helper()
	tok, err := identity.Parse(statusOf(t, xdg, name).Supervisor)
	if err != nil {
		t.Fatal(err)
	}
	h, err := identity.Open(tok)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.Signal(syscall.SIGKILL)
	h.WaitExit(10 * time.Second)
}

func TestSessionPool(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	first := mustStart(t, xdg, nil, "--pool", "p", "--max", "1", "--owner", "none", "--", "sleep", "1000")
	code, _, stderr := tetherIn(t, xdg, nil, "start", "--pool", "p", "--max", "1", "--owner", "none", "--", "sleep", "1000")
	if code != 125 || !strings.Contains(stderr, "pool is full") {
		t.Errorf("second member = %d, %q; want 125, pool is full", code, stderr)
	}
	// A member whose supervisor died is reclaimed, freeing its slot.
	killSupervisor(t, xdg, first)
	mustStart(t, xdg, nil, "--pool", "p", "--max", "1", "--owner", "none", "--", "sleep", "1000")
	// The start's opportunistic reap gets to it first ("reaped"); with
	// reaping off, pool admission reclaims it ("reclaimed"). Under systemd
	// the member's scope ends with its last process (the command died of
	// its parent-death signal) and systemd removes the leaf with it: reap
	// then finds nothing left ("supervisor-died").
	// The watcher of the supervisor's death (issue 24) may stop it first
	// ("supervisor-died").
	if s := statusOf(t, xdg, first); s.State != registry.StateStopped || (s.StopReason != "reaped" && s.StopReason != "reclaimed" && s.StopReason != "supervisor-died") {
		t.Errorf("dead member: %s/%s, want stopped/reaped", s.State, s.StopReason)
	}
	tetherIn(t, xdg, nil, "stop", "--all")
	assertNoSurvivors(t)
}

func TestSessionBadInput(t *testing.T) {
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "--name", "dup", "--owner", "none", "--", "sleep", "1000")
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 80))
	os.MkdirAll(long, 0o700)
	wide := t.TempDir()
	os.Chmod(wide, 0o700)
	os.Mkdir(filepath.Join(wide, "tether"), 0o700)
	os.Chmod(filepath.Join(wide, "tether"), 0o777)
	linked := t.TempDir()
	os.Chmod(linked, 0o700)
	os.Symlink(t.TempDir(), filepath.Join(linked, "tether"))
	// A symlink where a session's runtime dir would go.
	os.Symlink(t.TempDir(), filepath.Join(xdg, "tether", "s", "linked"))
	gone := exec.Command("true")
	startCmd(gone)
	gone.Wait()
	tests := []struct {
		name string
		xdg  string
		args []string
		code int
		want string
	}{
		{"duplicate name", xdg, []string{"--name", "dup"}, 1, "name in use"},
		{"bad name", xdg, []string{"--name", "a/b"}, 2, "bad name"},
		{"owner does not exist", xdg, []string{"--owner", "999999999"}, 125, "tether: refused (owner-gone): owner pid 999999999 is not running\n"},
		{"owner exited", xdg, []string{"--name", "x", "--owner", strconv.Itoa(gone.Process.Pid)}, 125, `tether: refused (owner-gone): session "x": owner pid ` + strconv.Itoa(gone.Process.Pid) + " is not running\n"},
		{"owner session missing", xdg, []string{"--owner", "session:nosuch"}, 125, "tether: refused (owner-gone): owner session:nosuch does not exist\n"},
		{"bad owner spec", xdg, []string{"--owner", "someone"}, 2, "owner"},
		{"unknown profile", xdg, []string{"--profile", "emacs"}, 2, "profile"},
		{"bad until", xdg, []string{"--until", "never"}, 2, "until"},
		{"world-writable state dir", wide, nil, 1, "mode"},
		{"symlinked state dir", linked, nil, 1, "symlink"},
		{"symlinked runtime dir", xdg, []string{"--name", "linked"}, 1, "symlink"},
		{"socket path too long", long, []string{"--profile", "tmux"}, 1, "AF_UNIX"},
		{"max without pool", xdg, []string{"--max", "2"}, 2, "--pool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := filepath.Join(t.TempDir(), "started")
			args := append(append([]string{"start"}, tt.args...), "--", "touch", started)
			code, _, stderr := tetherIn(t, tt.xdg, nil, args...)
			if code != tt.code || !strings.HasPrefix(stderr, "tether: ") || !strings.Contains(stderr, tt.want) {
				t.Errorf("tether start %s = %d, %q; want %d and %q", strings.Join(tt.args, " "), code, stderr, tt.code, tt.want)
			}
			time.Sleep(50 * time.Millisecond)
			if exists(started) {
				t.Error("the command ran")
			}
		})
	}
	// Nothing half-created by the refusals.
	reg, _ := store.Open(filepath.Join(long, "tether"))
	if recs, _ := reg.List(); len(recs) != 0 {
		t.Errorf("records after a refused start: %v", recs)
	}
	if ents, _ := os.ReadDir(filepath.Join(long, "tether", "s")); len(ents) != 0 {
		t.Errorf("runtime dirs after a refused start: %v", ents)
	}
	// The supervisor starts beside the claim and opens its log before the
	// go: the refused starts' supervisors removed theirs.
	if logs, _ := filepath.Glob(filepath.Join(xdg, "tether", "logs", "*")); len(logs) != 1 || !strings.HasPrefix(filepath.Base(logs[0]), "dup@") {
		t.Errorf("logs after the refused starts: %v, want dup's alone", logs)
	}
	if needRootOK() {
		other := t.TempDir()
		os.Chown(other, nobodyUID, nobodyUID)
		os.Chmod(other, 0o700)
		os.Mkdir(filepath.Join(other, "tether"), 0o700)
		os.Chown(filepath.Join(other, "tether"), nobodyUID, nobodyUID)
		code, _, stderr := tetherIn(t, other, nil, "start", "--", "true")
		if code != 1 || !strings.Contains(stderr, "owned by uid") {
			t.Errorf("state dir of another user = %d, %q", code, stderr)
		}
	}
}

func needRootOK() bool { return os.Getuid() == 0 }

// TestSessionOutlivesThrowawayShell: the agent-harness pattern. A tool
// call runs `sh -c 'tether start ...'` and the shell exits at once; the
// default owner (none outside a session) keeps the session running, and
// tether start says on stderr what owns it and how it ends.
func TestSessionOutlivesThrowawayShell(t *testing.T) {
	xdg := stateEnv(t)
	exe, _ := os.Executable()
	sh, _, stderr := tetherCmd(t)
	sh.Path, sh.Args = "/bin/sh", []string{"sh", "-c", `"$TETHER_EXE" start --name tool -- sleep 1000`}
	sh.Env = append(withoutEnv(sh.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg, "TETHER_EXE="+exe)
	if code := wait(t, sh); code != 0 {
		t.Fatalf("sh -c 'tether start' = %d: %s", code, stderr)
	}
	if want := `tether: started session "tool" (no owner; ends when its main process exits, or by tether stop tool)`; strings.TrimSpace(stderr.String()) != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	// An owner bound to the shell would have stopped the session within
	// milliseconds of its exit (TestSessionOwnerDeath).
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if s := statusOf(t, xdg, "tool"); s.State != registry.StateRunning || s.Owner != "none" {
			t.Fatalf("after the shell exited: state %s owner %q, want running with owner none", s.State, s.Owner)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// --owner parent binds the shell, and its exit stops the session.
	sh2, _, stderr2 := tetherCmd(t)
	sh2.Path, sh2.Args = "/bin/sh", []string{"sh", "-c", `"$TETHER_EXE" start --owner parent --name bound -- sleep 1000; sleep 0.2`}
	sh2.Env = sh.Env
	if code := wait(t, sh2); code != 0 {
		t.Fatalf("sh -c 'tether start --owner parent' = %d: %s", code, stderr2)
	}
	if !strings.Contains(stderr2.String(), "(the parent of tether start), whose exit stops it") {
		t.Errorf("stderr = %q, want the parent named as owner", stderr2)
	}
	if s, _ := awaitState(t, xdg, "bound", registry.StateStopped); s.StopReason != "owner-exit" {
		t.Errorf("bound session stop_reason = %q, want owner-exit", s.StopReason)
	}
	tetherIn(t, xdg, nil, "stop", "tool")
	assertNoSurvivors(t)
}

// TestStartHoldsNoCallerPipe: a pipe the caller of tether start had open
// (a harness's, a shell's $(...)) is not held by the supervisor or the
// session's command, so the caller's reader sees EOF once tether start
// has exited. (Held, it hung go test -fuzz's coordinator for good.)
func TestStartHoldsNoCallerPipe(t *testing.T) {
	xdg := stateEnv(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd, out, stderr := tetherCmd(t, "start", "-q", "--name", "detached", "--", "sleep", "1000")
	cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg)
	// fd 4 in tether start, without close-on-exec (fd 3 is taken over by
	// the supervisor's report pipe), as go test -fuzz's worker has its
	// pipes.
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cmd.ExtraFiles = []*os.File{null, w}
	code := wait(t, cmd)
	w.Close()
	if code != 0 {
		t.Fatalf("tether start = %d: %s", code, stderr)
	}
	eof := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, r)
		eof <- err
	}()
	select {
	case err := <-eof:
		if err != nil {
			t.Errorf("reading the caller's pipe: %v", err)
		}
	case <-time.After(10 * time.Second): // a hang guard
		r.Close()
		t.Errorf("the caller's pipe is still held open after tether start exited (session %s)", strings.TrimSpace(out.String()))
	}
	tetherIn(t, xdg, nil, "stop", "detached")
	assertNoSurvivors(t)
}

// TestStatusShowsConfig: status shows what a session was started with and
// how its stop went: start time with date and zone, the end policy, the
// TTL's end and what is left of it, the stop signal, the pool, and the
// receipt's verdict (issue 27).
func TestStatusShowsConfig(t *testing.T) {
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "-q", "--name", "conf", "--ttl", "1h", "--signal", "INT", "--pool", "p1", "--", "sleep", "1000")
	code, out, stderr := tetherIn(t, xdg, nil, "status", "conf")
	if code != 0 {
		t.Fatalf("tether status = %d: %s", code, stderr)
	}
	zone, _ := time.Now().Zone()
	for _, want := range []string{"started:    " + time.Now().Format("2006-01-02"), zone + " (", "until:      main-exit\n", "ttl:        ends at ", " left)\n", "signal:     SIGINT", "pool:       p1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("tether status lacks %q:\n%s", want, out)
		}
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "conf"); code != 0 {
		t.Fatalf("tether stop = %d: %s", code, stderr)
	}
	_, out, _ = tetherIn(t, xdg, nil, "status", "conf")
	if !strings.Contains(out, ".json (stop confirmed)\n") || strings.Contains(out, " left)") {
		t.Errorf("tether status of the stopped session:\n%s\nwant the receipt's verdict, no TTL left", out)
	}
}
