package reap_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/watch"
	"github.com/tether-run/tether/registry"
	"golang.org/x/sys/unix"
)

// faultCaseEnv carries a per-test marker into every process a fault test
// starts, so that its survivors are found by their environment alone.
const faultCaseEnv = "TETHER_CASE"

// faultDeadline bounds one tether invocation. It is a hang guard, never
// an assertion about how long anything takes.
const faultDeadline = 90 * time.Second

// faultPatience bounds the polls for a process to exit and for a record
// to reach a state: generous, and never a timing assertion.
const faultPatience = 20 * time.Second

// faultExitPatience is how long processes that were killed get to finish
// exiting before they count as survivors.
const faultExitPatience = 5 * time.Second

// faultRunScript ignores SIGTERM and leaves a setsid'd and a
// double-forked descendant that ignore it too, so that a stop needs every
// step of the protocol, cgroup.kill included.
const faultRunScript = `trap "" TERM; setsid sh -c "trap \"\" TERM; sleep 1000" & (sleep 1000 &); sleep 1000`

// faultSessionScript is the session workload: TERM-ignoring, with a
// setsid'd descendant.
const faultSessionScript = `trap "" TERM; setsid sleep 1000 & : > "$TETHER_SESSION_DIR/ready"; sleep 1000`

// The crash points of contain and atomicfile, in the order a run meets
// them.
var (
	faultStartPoints = []string{"before-leaf", "after-leaf", "before-start", "after-start"}
	faultStopPoints  = []string{"stop-after-term", "stop-before-kill", "stop-before-reap", "stop-before-rmdir"}
	faultAllPoints   = slices.Concat(faultStartPoints, faultStopPoints, []string{"atomic-before-rename"})
)

// faultBinDir holds the tether binary built with crash points; TestMain
// removes it.
var faultBinDir string

// faultBinary builds tether with crash points once per test binary.
var faultBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "tether-fault-bin-")
	if err != nil {
		return "", err
	}
	faultBinDir = dir
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building tether with crash points: %w", err)
	}
	bin := filepath.Join(dir, "tether")
	cmd := exec.Command(goTool, "build", "-tags", "crashpoints", "-o", bin, "../../cmd/tether")
	cmd.Env = append(faultWithout(os.Environ(), "CGO_ENABLED"), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("CGO_ENABLED=0 go build -tags crashpoints ../../cmd/tether: %v\n%s", err, out)
	}
	return bin, nil
})

// faultEnv is one test's world: its own state directory (through
// XDG_RUNTIME_DIR), its own marker, and its own cgroup v2 directory that
// every tether it starts is born in. The cgroup keeps the tests apart:
// tether's default leaf parent, and the parent reap scans for orphan
// leaves, is the caller's own cgroup, so `reap --orphan-leaves` in one
// test never touches another test's leaves.
type faultEnv struct {
	t     *testing.T
	bin   string
	xdg   string // XDG_RUNTIME_DIR
	state string // the registry: xdg/tether
	io    string // stdout and stderr files of the commands
	mark  string // value of faultCaseEnv
	cg    string // the test's cgroup v2 directory
	cgfd  int
	// deadline is the hang guard of each tether invocation (default
	// faultDeadline).
	deadline time.Duration
	// watched lets tether use its owner-death watcher (internal/watch).
	watched bool
}

func faultSetup(t *testing.T) *faultEnv {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: creates cgroups and files owned by other users")
	}
	if _, err := cgroup.Mount(); err != nil {
		t.Skipf("needs cgroup v2: %v", err)
	}
	parent, err := cgroup.DefaultParent()
	if err != nil {
		t.Skipf("needs our own cgroup v2 directory: %v", err)
	}
	if err := cgroup.CheckParent(parent); err != nil {
		t.Skipf("needs a writable cgroup v2 directory: %v", err)
	}
	bin, err := faultBinary()
	if err != nil {
		t.Fatal(err)
	}
	f := &faultEnv{t: t, bin: bin, mark: faultHex(8), io: t.TempDir()}
	f.xdg = t.TempDir()
	leakcheck.AwaitAtCleanup(t, watch.Env, filepath.Join(f.xdg, "tether")) // its watcher, before the dir goes
	if err := os.Chmod(f.xdg, 0o700); err != nil {
		t.Fatal(err)
	}
	f.state = filepath.Join(f.xdg, "tether")
	f.cg = filepath.Join(parent, "fault-"+f.mark)
	if err := os.Mkdir(f.cg, 0o755); err != nil {
		t.Fatalf("mkdir %s: %v", f.cg, err)
	}
	f.cgfd, err = unix.Open(f.cg, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(f.cg)
		t.Fatalf("open %s: %v", f.cg, err)
	}
	// Cleanups run last-in first-out: survivors die before the cgroup
	// goes.
	t.Cleanup(f.removeCgroup)
	t.Cleanup(f.killSurvivors)
	return f
}

// in returns f reporting to t (a subtest).
func (f *faultEnv) in(t *testing.T) *faultEnv {
	g := *f
	g.t = t
	return &g
}

func faultHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// faultWithout returns env without the variables named in names.
func faultWithout(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			out = append(out, kv)
		}
	}
	return out
}

// faultProc is a tether process started by a test.
type faultProc struct {
	f              *faultEnv
	cmd            *exec.Cmd
	ctx            context.Context
	cancel         context.CancelFunc
	stdout, stderr string // file names
	res            *faultResult
}

// faultResult is how a tether process ended.
type faultResult struct {
	code           int            // exit code; 128+n when killed by signal n
	signal         syscall.Signal // the signal that killed it, or 0
	stdout, stderr string
}

func (r faultResult) String() string {
	if r.signal != 0 {
		return fmt.Sprintf("killed by %v", r.signal)
	}
	return fmt.Sprintf("exit %d", r.code)
}

// start starts tether with args in the test's cgroup and state directory,
// with env added to its environment (later values win). Its output goes to
// files, so that a survivor holding them cannot delay Wait.
func (f *faultEnv) start(env []string, args ...string) *faultProc {
	t := f.t
	t.Helper()
	p := &faultProc{f: f}
	d := f.deadline
	if d == 0 {
		d = faultDeadline
	}
	p.ctx, p.cancel = context.WithTimeout(context.Background(), d)
	p.cmd = f.command(p.ctx, env, args...)
	out, err := os.CreateTemp(f.io, "stdout-*")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	errf, err := os.CreateTemp(f.io, "stderr-*")
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	p.stdout, p.stderr = out.Name(), errf.Name()
	p.cmd.Stdout, p.cmd.Stderr = out, errf
	if err := p.cmd.Start(); err != nil {
		p.cancel()
		t.Fatalf("start tether %s: %v", strings.Join(args, " "), err)
	}
	t.Cleanup(func() {
		if p.res == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
			p.cancel()
		}
	})
	return p
}

// command prepares tether with args in the test's cgroup and state
// directory, with env added to its environment (later values win).
func (f *faultEnv) command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, f.bin, args...)
	base := faultWithout(os.Environ(), "XDG_RUNTIME_DIR", "TETHER_CRASH_AT", faultCaseEnv,
		"TETHER_CGROUP_PARENT", "TETHER_NO_REAP", "TETHER_SESSION", "TETHER_SESSION_DIR", "TETHER_TEST_FORCE", "TETHER_NO_WATCH")
	cmd.Env = append(append(base, "XDG_RUNTIME_DIR="+f.xdg, faultCaseEnv+"="+f.mark), env...)
	if !f.watched {
		// What tether reap recovers is what a dead tether leaves when
		// no watcher stops it first (the watcher killed as well): the
		// fault tests of reap test that (faults_ownerdeath tests the
		// watcher).
		cmd.Env = append(cmd.Env, "TETHER_NO_WATCH=1")
	}
	cmd.Dir = f.io
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: f.cgfd}
	return cmd
}

// wait waits for p and returns how it ended.
func (p *faultProc) wait() faultResult {
	t := p.f.t
	t.Helper()
	if p.res != nil {
		return *p.res
	}
	err := p.cmd.Wait()
	defer p.cancel()
	if p.ctx.Err() != nil {
		t.Fatalf("tether %s: hung: killed by the hang guard", strings.Join(p.cmd.Args[1:], " "))
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("tether %s: %v", strings.Join(p.cmd.Args[1:], " "), err)
	}
	r := faultResult{}
	ws := p.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		r.signal, r.code = ws.Signal(), 128+int(ws.Signal())
	} else {
		r.code = ws.ExitStatus()
	}
	o, _ := os.ReadFile(p.stdout)
	e, _ := os.ReadFile(p.stderr)
	r.stdout, r.stderr = string(o), string(e)
	p.res = &r
	return r
}

// tether runs tether with args to its end.
func (f *faultEnv) tether(env []string, args ...string) faultResult {
	f.t.Helper()
	return f.start(env, args...).wait()
}

// reap runs `tether reap --json` with args and decodes its report.
func (f *faultEnv) reap(args ...string) (faultResult, *reap.Report) {
	f.t.Helper()
	r := f.tether(nil, append([]string{"reap", "--json"}, args...)...)
	var rep reap.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		f.t.Fatalf("tether reap --json %s = %s, stdout not a report: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), r, err, r.stdout, r.stderr)
	}
	return r, &rep
}

// reapWith runs `tether reap --json` with env added.
func (f *faultEnv) reapWith(env []string, args ...string) (faultResult, *reap.Report) {
	f.t.Helper()
	r := f.tether(env, append([]string{"reap", "--json"}, args...)...)
	var rep reap.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		f.t.Fatalf("tether reap --json = %s, stdout not a report: %v\nstderr: %s", r, err, r.stderr)
	}
	return r, &rep
}

// killSupervisor SIGKILLs the supervisor of session name through a pidfd
// proven against its record, and waits for it to exit.
func (f *faultEnv) killSupervisor(name string) {
	t := f.t
	t.Helper()
	tok, err := identity.Parse(f.record(name).Supervisor)
	if err != nil {
		t.Fatalf("supervisor of %s: %v", name, err)
	}
	h, err := identity.Open(tok)
	if err != nil {
		t.Fatalf("supervisor of %s: %v", name, err)
	}
	defer h.Close()
	h.Signal(syscall.SIGKILL)
	if !h.WaitExit(faultPatience) {
		t.Fatalf("supervisor %s did not exit after SIGKILL", tok)
	}
}

// crashRun runs `tether run ARGS -- sh -c faultRunScript` with
// TETHER_CRASH_AT=point and returns how it ended. At a point of the stop
// (faultStopPoints) the stop is a SIGTERM to tether once the workload has
// its 3 sleeps, all forked after its trap: a --timeout raced sh's start
// (300 ms, then 2 s, beside the other parallel fault tests under TCG),
// and a TERM before the trap ends the run with no kill, so
// stop-before-kill is never reached. The other points come before the
// command runs: there is nothing to wait for.
func (f *faultEnv) crashRun(point string, args ...string) faultResult {
	f.t.Helper()
	p := f.start([]string{"TETHER_CRASH_AT=" + point}, slices.Concat([]string{"run"}, args, []string{"--", "sh", "-c", faultRunScript})...)
	if slices.Contains(faultStopPoints, point) {
		f.awaitSleepers(3)
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	return p.wait()
}

// awaitSleepers waits until the workload has forked n sleeps (sleepers).
func (f *faultEnv) awaitSleepers(n int) {
	f.t.Helper()
	for deadline := time.Now().Add(faultPatience); f.sleepers() < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			f.t.Fatalf("the workload never forked its %d sleeps (%d)", n, f.sleepers())
		}
	}
}

// sleepers counts the test's live "sleep 1000" processes: the daemons a
// workload forks, which tests wait for before they break something.
func (f *faultEnv) sleepers() int {
	n := 0
	for _, argv := range f.survivors() {
		if argv == "sleep 1000" {
			n++
		}
	}
	return n
}

// faultAction returns the action of rep for the record name, or nil.
func faultAction(rep *reap.Report, name string) *reap.Action {
	for i := range rep.Actions {
		if rep.Actions[i].Name == name {
			return &rep.Actions[i]
		}
	}
	return nil
}

// faultFile is a file in records/ as it was found.
type faultFile struct {
	data []byte
	rec  *registry.Record // decoded; nil if it does not decode
	temp bool             // a temp file of an atomic write (".NAME.json.tmp*")
}

// recordFiles returns the files in records/ by file name, temp files of
// atomic writes included.
func (f *faultEnv) recordFiles() map[string]faultFile {
	out := map[string]faultFile{}
	ents, err := os.ReadDir(filepath.Join(f.state, "records"))
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			f.t.Fatal(err)
		}
		return out
	}
	for _, e := range ents {
		p := filepath.Join(f.state, "records", e.Name())
		ff := faultFile{temp: strings.HasPrefix(e.Name(), ".") && strings.Contains(e.Name(), ".tmp")}
		if e.Type()&os.ModeSymlink == 0 {
			ff.data, _ = os.ReadFile(p)
		}
		var rec registry.Record
		if json.Unmarshal(ff.data, &rec) == nil && rec.Name != "" {
			ff.rec = &rec
		}
		out[e.Name()] = ff
	}
	return out
}

// record reads the record of name (live, in records/, or ended, in
// ended/), or returns nil if there is none.
func (f *faultEnv) record(name string) *registry.Record {
	b, err := os.ReadFile(filepath.Join(f.state, "records", name+".json"))
	if errors.Is(err, os.ErrNotExist) {
		b, err = os.ReadFile(filepath.Join(f.state, "ended", name+".json"))
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var rec registry.Record
	if err == nil {
		err = json.Unmarshal(b, &rec)
	}
	if err != nil {
		f.t.Fatalf("record %s: %v", name, err)
	}
	return &rec
}

// leaves returns the tether leaves in the test's cgroup.
func (f *faultEnv) leaves() []string {
	ents, _ := os.ReadDir(f.cg)
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), cgroup.LeafPrefix) {
			out = append(out, filepath.Join(f.cg, e.Name()))
		}
	}
	return out
}

// survivors returns the live processes carrying the test's marker.
func (f *faultEnv) survivors() map[int]string { return leakcheck.Find(faultCaseEnv, f.mark) }

// assertNoSurvivors fails the test if a process carrying its marker is
// still alive once exits had time to finish.
func (f *faultEnv) assertNoSurvivors(when string) {
	f.t.Helper()
	var left map[int]string
	for deadline := time.Now().Add(faultExitPatience); ; time.Sleep(20 * time.Millisecond) {
		if left = f.survivors(); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for pid, argv := range left {
		f.t.Errorf("%s: pid %d %q survived", when, pid, argv)
	}
}

// killSurvivors kills what a failed test left, each process through a
// pidfd opened before its marker is checked again, so that a reused pid
// is never signalled.
func (f *faultEnv) killSurvivors() {
	needle := []byte("\x00" + faultCaseEnv + "=" + f.mark + "\x00")
	for range 50 {
		left := f.survivors()
		if len(left) == 0 {
			return
		}
		for pid := range left {
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				continue
			}
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err == nil && bytes.Contains(append([]byte{0}, env...), needle) {
				unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			}
			unix.Close(fd)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// removeCgroup removes the test's cgroup. Leaves still in it are a
// failure of the test unless it already failed (then they are its
// consequence): they are emptied and removed so that the next test and
// leakcheck start clean.
func (f *faultEnv) removeCgroup() {
	defer unix.Close(f.cgfd)
	left := f.leaves()
	if len(left) > 0 && !f.t.Failed() {
		f.t.Errorf("tether leaves left in the test's cgroup: %v", left)
	}
	// Nothing is started into the test's cgroup any more: killing it is
	// safe from the kernel's kill trap.
	for _, d := range append(left, f.cg) {
		os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0)
	}
	for _, d := range append(left, f.cg) {
		var err error
		for range 500 {
			if err = unix.Rmdir(d); err == nil || errors.Is(err, unix.ENOENT) {
				err = nil
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			f.t.Errorf("rmdir %s: %v", d, err)
		}
	}
}
