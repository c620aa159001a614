package reap_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/reap"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
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
const faultSessionScript = `trap "" TERM; setsid sleep 1000 & sleep 1000`

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
	cmd := exec.Command(goTool, "build", "-tags", "crashpoints", "-o", bin, "../cmd/tether")
	cmd.Env = append(faultWithout(os.Environ(), "CGO_ENABLED"), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("CGO_ENABLED=0 go build -tags crashpoints ../cmd/tether: %v\n%s", err, out)
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
		"TETHER_CGROUP_PARENT", "TETHER_NO_REAP", "TETHER_SESSION", "TETHER_SESSION_DIR", "TETHER_TEST_FORCE")
	cmd.Env = append(append(base, "XDG_RUNTIME_DIR="+f.xdg, faultCaseEnv+"="+f.mark), env...)
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

// killedAt checks that tether died of the SIGKILL of crash point point.
func (f *faultEnv) killedAt(what, point string, r faultResult) {
	f.t.Helper()
	if r.signal != syscall.SIGKILL {
		f.t.Fatalf("%s with TETHER_CRASH_AT=%s = %s, want killed by SIGKILL at the crash point (not reached?)\nstderr: %s", what, point, r, r.stderr)
	}
}

// checkAccounted checks that the reap that produced rep accounted for
// every file that was in records/ before it (before): each record is in
// the report with a class and a plan; one reap acted on is done (a stop
// with a confirmed receipt, also in receipts/), one reported is left
// byte for byte; a record is deleted only as a finished run; no leaf of a
// record reap finished is left; a session it finished has no runtime dir
// left. A temp file of an interrupted atomic write is reported or
// cleaned, not left behind unmentioned.
func (f *faultEnv) checkAccounted(before map[string]faultFile, rep *reap.Report) {
	t := f.t
	t.Helper()
	after := f.recordFiles()
	for fn, ff := range before {
		if ff.temp {
			_, still := after[fn]
			named := faultAction(rep, fn) != nil || faultAction(rep, strings.TrimSuffix(fn, ".json")) != nil ||
				(ff.rec != nil && faultAction(rep, ff.rec.Name) != nil)
			if still && !named {
				what := "undecodable"
				if ff.rec != nil {
					what = fmt.Sprintf("record %q, state %s, cgroup %q", ff.rec.Name, ff.rec.State, ff.rec.Cgroup)
				}
				t.Errorf("records/%s, the temp file of an atomic write interrupted by a crash (%s), is neither in the reap report nor cleaned up: it stays forever", fn, what)
			}
			continue
		}
		name := strings.TrimSuffix(fn, ".json")
		a := faultAction(rep, name)
		if a == nil {
			t.Errorf("record %s: not in the reap report: lost", name)
			continue
		}
		if a.Class == "" || a.Plan == "" {
			t.Errorf("record %s: class %q plan %q, want both", name, a.Class, a.Plan)
		}
		switch a.Class {
		case reap.DeadLeaf, reap.DeadFallback:
			if !a.Done || a.Error != "" || a.Receipt == nil || !a.Receipt.StopConfirmed {
				t.Errorf("record %s (%s): done %t, error %q, receipt %v; want done with a confirmed stop", name, a.Class, a.Done, a.Error, faultConfirmed(a.Receipt))
			}
			b, err := os.ReadFile(filepath.Join(f.state, "receipts", name+".json"))
			var r receipt.Receipt
			if err == nil {
				err = json.Unmarshal(b, &r)
			}
			if err != nil || !r.StopConfirmed {
				t.Errorf("receipts/%s.json: %v, stop_confirmed %t; want the confirmed receipt of the reap", name, err, r.StopConfirmed)
			}
		case reap.DeadEmpty, reap.OtherBoot, reap.Ended:
			if !a.Done || a.Error != "" {
				t.Errorf("record %s (%s): done %t, error %q; want done", name, a.Class, a.Done, a.Error)
			}
		case reap.Corrupt:
			// Error carries why it is corrupt; Done says it was quarantined.
			if !a.Done || a.Error == "" {
				t.Errorf("record %s (%s): done %t, error %q; want quarantined, with the reason", name, a.Class, a.Done, a.Error)
			}
		default: // reported and left alone
			if a.Done || !bytes.Equal(after[fn].data, ff.data) {
				t.Errorf("record %s (%s): done %t, changed %t; want it reported and left as it was", name, a.Class, a.Done, !bytes.Equal(after[fn].data, ff.data))
			}
		}
		// A session record that ended moves from records/ to ended/.
		if _, ok := after[fn]; !ok && a.Class != reap.Corrupt && (ff.rec == nil || ff.rec.Kind != "run") && f.record(name) == nil {
			t.Errorf("record %s (%s): deleted by reap; only a finished run's record may be", name, a.Class)
		}
		if ff.rec == nil || !a.Done || a.Class == reap.Corrupt {
			continue
		}
		if ff.rec.Cgroup != "" {
			if _, err := os.Stat(ff.rec.Cgroup); !errors.Is(err, os.ErrNotExist) {
				procs, _ := os.ReadFile(filepath.Join(ff.rec.Cgroup, "cgroup.procs"))
				t.Errorf("record %s (%s, state %s): its leaf %s is still there (procs %q) after reap reported it done: nothing will remove it (it is referenced, so not an orphan either)",
					name, a.Class, ff.rec.State, ff.rec.Cgroup, strings.Fields(string(procs)))
			}
		}
		if ff.rec.Kind != "run" && ff.rec.RuntimeDir != "" {
			rec := f.record(name)
			if rec == nil || rec.Live() {
				t.Errorf("session %s: record after reap %+v; want it ended", name, rec)
			} else if _, err := os.Stat(ff.rec.RuntimeDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("session %s (%s, now %s): runtime dir %s still there after reap", name, a.Class, rec.State, ff.rec.RuntimeDir)
			}
		}
	}
}

func faultConfirmed(r *receipt.Receipt) string {
	if r == nil {
		return "none"
	}
	return fmt.Sprintf("stop_confirmed %t, evidence %+v", r.StopConfirmed, r.Evidence)
}

// reapOrphans checks the orphan leaves rep reported (want of them, all
// in the test's cgroup, all empty: a leaf only goes unrecorded before
// anything starts in it), then removes them with --orphan-leaves.
func (f *faultEnv) reapOrphans(rep *reap.Report, want int) {
	t := f.t
	t.Helper()
	orphans := faultV2Orphans(rep)
	for _, ol := range orphans {
		if filepath.Dir(ol.Path) != f.cg {
			t.Errorf("orphan leaf %s: outside the caller's cgroup %s", ol.Path, f.cg)
		}
		if ol.Procs != 0 || ol.Removed {
			t.Errorf("orphan leaf %s: procs %d removed %t; want an empty leaf, reported only", ol.Path, ol.Procs, ol.Removed)
		}
	}
	if len(orphans) != want {
		t.Errorf("orphan leaves = %+v, want %d", orphans, want)
	}
	if len(orphans) == 0 {
		return
	}
	// Only an empty leaf older than reap.StaleAge is removed: age them.
	old := time.Now().Add(-2 * reap.StaleAge)
	for _, ol := range orphans {
		if err := os.Chtimes(ol.Path, old, old); err != nil {
			t.Errorf("age orphan leaf %s: %v", ol.Path, err)
		}
	}
	r, rep2 := f.reap("--orphan-leaves")
	if r.code != 0 {
		t.Errorf("tether reap --orphan-leaves = %s: %s", r, r.stderr)
	}
	for _, ol := range faultV2Orphans(rep2) {
		if !ol.Removed || ol.Error != "" {
			t.Errorf("tether reap --orphan-leaves: %s removed %t error %q", ol.Path, ol.Removed, ol.Error)
		}
		if _, err := os.Stat(ol.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("orphan leaf %s still there after --orphan-leaves: %v", ol.Path, err)
		}
	}
}

// faultV2Orphans returns the v2 orphan leaves of rep. The v1 ones (the
// limits of hybrid hosts) are under the test binary's v1 cgroups, shared
// by the tests running in parallel, so they cannot be told apart by test.
func faultV2Orphans(rep *reap.Report) []reap.OrphanLeaf {
	var out []reap.OrphanLeaf
	for _, ol := range rep.OrphanLeaves {
		if ol.Hierarchy == "v2" {
			out = append(out, ol)
		}
	}
	return out
}

// checkNoop checks that another reap finds nothing to do: no error, no
// action but on ended or live records, no orphan leaf, no run record and
// no leaf left.
func (f *faultEnv) checkNoop() {
	t := f.t
	t.Helper()
	r, rep := f.reap()
	if r.code != 0 {
		t.Errorf("second tether reap = %s: %s", r, r.stderr)
	}
	// Stale entries (a runtime dir without a record, a temp file of an
	// interrupted write) are reported until they are older than
	// reap.StaleAge, then removed: age them and check that they go.
	var stale []string
	for _, a := range rep.Actions {
		if a.Class == reap.Stale && !a.Done && a.Error == "" {
			p := filepath.Join(f.state, "s", a.Name)
			if strings.HasPrefix(a.Name, ".") {
				p = filepath.Join(f.state, "records", a.Name)
			}
			old := time.Now().Add(-2 * reap.StaleAge)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Errorf("age stale %s: %v", p, err)
			}
			stale = append(stale, a.Name)
		}
	}
	if len(stale) > 0 {
		r, rep = f.reap()
		for _, name := range stale {
			if a := faultAction(rep, name); a == nil || !a.Done {
				t.Errorf("stale %s older than reap.StaleAge: %+v, want removed", name, a)
			}
		}
		r, rep = f.reap()
	}
	for _, a := range rep.Actions {
		if a.Error != "" || (a.Class != reap.Ended && a.Class != reap.Supervised) {
			t.Errorf("second tether reap: %s: class %s, done %t, error %q; want nothing left to do", a.Name, a.Class, a.Done, a.Error)
		}
	}
	if o := faultV2Orphans(rep); len(o) != 0 {
		t.Errorf("second tether reap: orphan leaves %+v", o)
	}
	for fn, ff := range f.recordFiles() {
		if !ff.temp && ff.rec != nil && ff.rec.Kind == "run" {
			t.Errorf("second tether reap: run record %s left (state %s)", fn, ff.rec.State)
		}
	}
	if l := f.leaves(); len(l) != 0 {
		t.Errorf("leaves left: %v", l)
	}
}

// deadRun leaves a run whose tether was SIGKILLed in the middle of its
// stop, its leaf still holding TERM-ignoring members, and returns its
// record.
func (f *faultEnv) deadRun() *registry.Record {
	t := f.t
	t.Helper()
	r := f.tether([]string{"TETHER_CRASH_AT=stop-before-kill"},
		"run", "--no-reap", "--timeout", "1s", "--grace", "100ms", "--", "sh", "-c", faultRunScript)
	f.killedAt("tether run", "stop-before-kill", r)
	var rec *registry.Record
	for fn, ff := range f.recordFiles() {
		if ff.temp || ff.rec == nil || ff.rec.Kind != "run" {
			t.Fatalf("records/%s: want only the dead run's record", fn)
		}
		rec = ff.rec
	}
	if rec == nil || rec.Cgroup == "" {
		t.Fatalf("dead run's record = %+v, want one with its leaf", rec)
	}
	if len(f.survivors()) == 0 {
		t.Fatalf("the dead run's leaf holds no members: nothing for reap to prove itself on")
	}
	return rec
}

// TestFaultRunCrash kills `tether run` at every crash point and checks
// that `tether reap` recovers: no process survives, every record is
// accounted for, no leaf is left, and a second reap has nothing to do.
func TestFaultRunCrash(t *testing.T) {
	t.Parallel()
	for _, point := range faultAllPoints {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			r := f.tether([]string{"TETHER_CRASH_AT=" + point},
				"run", "--no-reap", "--timeout", "300ms", "--grace", "100ms", "--", "sh", "-c", faultRunScript)
			f.killedAt("tether run", point, r)
			before := f.recordFiles()
			if len(before) == 0 {
				t.Fatalf("no record file after a crash at %s: a run must be recorded before anything of it exists", point)
			}
			rr, rep := f.reap()
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			f.checkAccounted(before, rep)
			for fn, ff := range before {
				if a := faultAction(rep, strings.TrimSuffix(fn, ".json")); !ff.temp && a != nil && !strings.HasPrefix(string(a.Class), "dead-supervisor") {
					t.Errorf("record %s of a SIGKILLed tether run: class %s, want a dead-supervisor class", fn, a.Class)
				}
			}
			orphans := 0
			if point == "after-leaf" {
				orphans = 1 // created before the record knew it
			}
			f.reapOrphans(rep, orphans)
			f.checkNoop()
		})
	}
}

// TestFaultSessionCrash kills a session's supervisor at every crash point
// (and `tether start` itself at the one of its atomic writes), then checks
// that `tether reap` recovers as for runs. The crash variable is in the
// environment of `tether start`, which the supervisor inherits; for the
// stop points the session starts normally and `tether stop` makes the
// supervisor die in the middle of its stop.
func TestFaultSessionCrash(t *testing.T) {
	t.Parallel()
	for _, point := range faultAllPoints {
		t.Run(point, func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			start := f.tether([]string{"TETHER_CRASH_AT=" + point},
				"start", "--no-reap", "--owner", "none", "--name", "s", "--grace", "100ms", "--", "sh", "-c", faultSessionScript)
			stopping := slices.Contains(faultStopPoints, point)
			switch {
			case point == "atomic-before-rename":
				f.killedAt("tether start", point, start)
			case stopping:
				if start.code != 0 {
					t.Fatalf("tether start = %s, want 0: %s", start, start.stderr)
				}
				stop := f.tether(nil, "stop", "--grace", "100ms", "s")
				if stop.code == 0 {
					t.Fatalf("tether stop = 0 (%s), want a failure: the supervisor should have died at %s", stop.stdout, point)
				}
				t.Logf("tether stop = %s: %s", stop, strings.TrimSpace(stop.stderr))
			default:
				if start.code == 0 {
					t.Fatalf("tether start = 0, want a failure: the supervisor should have died at %s", point)
				}
				t.Logf("tether start = %s: %s", start, strings.TrimSpace(start.stderr))
			}
			before := f.recordFiles()
			rr, rep := f.reap()
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			f.checkAccounted(before, rep)
			if stopping {
				a := faultAction(rep, "s")
				if a == nil || a.Class != reap.DeadLeaf {
					t.Errorf("session s, supervisor killed in its stop: action %+v, want %s", a, reap.DeadLeaf)
				}
				if rec := f.record("s"); rec == nil || rec.State != registry.StateStopped || rec.StopReason != "reaped" || rec.Receipt == "" {
					t.Errorf("session s after reap: %+v, want stopped, reaped, with its receipt", rec)
				}
			}
			// Whatever happened, the name is not stuck: no runtime dir
			// is left without a live session or a report of it.
			rt := filepath.Join(f.state, "s", "s")
			if _, err := os.Stat(rt); !errors.Is(err, os.ErrNotExist) {
				rec := f.record("s")
				if rec == nil && faultAction(rep, "s") == nil {
					ents, _ := os.ReadDir(rt)
					var names []string
					for _, e := range ents {
						names = append(names, e.Name())
					}
					t.Errorf("runtime dir %s (holding %v) is left with no record and no mention in the reap report: the name %q stays claimed (tether start --name s fails) and nothing cleans it", rt, names, "s")
				} else if rec != nil && !rec.Live() {
					t.Errorf("runtime dir %s left for the ended session s (%s)", rt, rec.State)
				}
			}
			orphans := 0
			if point == "after-leaf" {
				orphans = 1
			}
			f.reapOrphans(rep, orphans)
			f.checkNoop()
		})
	}
}

// TestFaultSupervisorKilled SIGKILLs a running session's supervisor at a
// random moment, through a pidfd verified against its recorded identity,
// while the session keeps forking setsid'd daemons; reap stops the leaf.
func TestFaultSupervisorKilled(t *testing.T) {
	t.Parallel()
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			f := faultSetup(t)
			r := f.tether(nil, "start", "--no-reap", "--owner", "none", "--name", "s", "--",
				"sh", "-c", `trap "" TERM; while :; do setsid sleep 1000 & sleep 0.02; done`)
			if r.code != 0 {
				t.Fatalf("tether start = %s: %s", r, r.stderr)
			}
			// At least one daemon escaped the process group first, so
			// that reap has members to prove itself on.
			for deadline := time.Now().Add(faultPatience); !faultHasDaemon(f.survivors()); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the session forked no daemon: %v", f.survivors())
				}
			}
			time.Sleep(mrand.N(300 * time.Millisecond))
			rec := f.record("s")
			tok, err := identity.Parse(rec.Supervisor)
			if err != nil {
				t.Fatalf("supervisor of s: %v", err)
			}
			h, err := identity.Open(tok)
			if err != nil {
				t.Fatalf("supervisor of s: %v", err)
			}
			h.Signal(syscall.SIGKILL)
			if !h.WaitExit(faultPatience) {
				t.Fatalf("supervisor %s did not exit after SIGKILL", tok)
			}
			h.Close()
			before := f.recordFiles()
			rr, rep := f.reap()
			if rr.code != 0 {
				t.Errorf("tether reap = %s: %s", rr, rr.stderr)
			}
			f.assertNoSurvivors("after tether reap")
			if a := faultAction(rep, "s"); a == nil || a.Class != reap.DeadLeaf || a.Receipt == nil || a.Receipt.Evidence.MembersSeen == 0 {
				t.Errorf("action for s = %+v, want %s with the members it stopped", a, reap.DeadLeaf)
			}
			f.checkAccounted(before, rep)
			f.reapOrphans(rep, 0)
			f.checkNoop()
		})
	}
}

// faultHasDaemon reports whether procs holds a session's `sleep 1000`.
func faultHasDaemon(procs map[int]string) bool {
	for _, argv := range procs {
		if argv == "sleep 1000" {
			return true
		}
	}
	return false
}

// TestFaultCorruptRecords places records that cannot be decoded beside a
// valid dead one: each is quarantined byte for byte with its reason, and
// the valid one is still reaped.
func TestFaultCorruptRecords(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	dead := f.deadRun()
	valid, err := os.ReadFile(filepath.Join(f.state, "records", dead.Name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	// like returns the dead run's record (its leaf included) renamed and
	// changed by edit, so that a record taken for valid would be acted on.
	like := func(name string, edit func(*registry.Record)) []byte {
		rec := *dead
		rec.Name = name
		if edit != nil {
			edit(&rec)
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	truncated := like("truncated", nil)
	cases := []struct {
		file string
		data []byte
	}{
		{"garbage.json", []byte("\x00\xffthis is not JSON\n")},
		{"truncated.json", truncated[:len(truncated)/2]},
		{"empty.json", nil},
		{"null.json", []byte("null\n")},
		{"wrong-schema.json", like("wrong-schema", func(r *registry.Record) { r.SchemaVersion = registry.SchemaVersion + 1 })},
		{"no-schema.json", []byte(`{"name": "no-schema", "kind": "run", "state": "running"}`)},
		{"wrong-name.json", valid},
		{"oversized.json", like("oversized", func(r *registry.Record) { r.Argv = []string{strings.Repeat("x", 1<<20)} })},
		{"bad name!.json", like("bad name!", nil)},
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(f.state, "records", c.file), c.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := f.recordFiles()
	r, rep := f.reap()
	if r.code != 0 {
		t.Errorf("tether reap = %s, want 0 (corrupt records quarantined are handled): %s", r, r.stderr)
	}
	f.assertNoSurvivors("after tether reap")
	f.checkAccounted(before, rep)
	if a := faultAction(rep, dead.Name); a == nil || a.Class != reap.DeadLeaf {
		t.Errorf("the valid dead record beside corrupt ones: %+v, want %s", a, reap.DeadLeaf)
	}
	q := filepath.Join(f.state, "quarantine")
	var st unix.Stat_t
	if err := unix.Lstat(q, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o777 != 0o700 || st.Uid != 0 {
		t.Errorf("quarantine dir %s: %v, mode %#o uid %d; want a 0700 directory of ours", q, err, st.Mode, st.Uid)
	}
	ents, _ := os.ReadDir(q)
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			name := strings.TrimSuffix(c.file, ".json")
			if a := faultAction(rep, name); a == nil || a.Class != reap.Corrupt || !a.Done || a.Error == "" {
				t.Errorf("action = %+v, want %s, done, with the reason", a, reap.Corrupt)
			}
			if _, err := os.Lstat(filepath.Join(f.state, "records", c.file)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("records/%s still there: %v", c.file, err)
			}
			var moved []string
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), c.file+".") && !strings.HasSuffix(e.Name(), ".reason") {
					moved = append(moved, e.Name())
				}
			}
			if len(moved) != 1 {
				t.Fatalf("quarantine/%s.* = %v, want the one record", c.file, moved)
			}
			got, err := os.ReadFile(filepath.Join(q, moved[0]))
			if err != nil || !bytes.Equal(got, c.data) {
				t.Errorf("quarantine/%s: %d bytes, %v; want the original %d bytes unchanged", moved[0], len(got), err, len(c.data))
			}
			why, err := os.ReadFile(filepath.Join(q, moved[0]+".reason"))
			if err != nil || len(bytes.TrimSpace(why)) == 0 {
				t.Errorf("quarantine/%s.reason = %q, %v; want the reason", moved[0], why, err)
			}
		})
	}
	if len(ents) != 2*len(cases) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("quarantine holds %v, want a record and a reason for each of the %d corrupt ones", names, len(cases))
	}
	f.checkNoop()
}

// TestFaultRecordNotRegular places a FIFO and a directory where records
// go: reap reports them, leaves them in place or quarantines them, and
// neither blocks it nor keeps it from reaping a valid dead record.
func TestFaultRecordNotRegular(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	dead := f.deadRun()
	recs := filepath.Join(f.state, "records")
	if err := errors.Join(unix.Mkfifo(filepath.Join(recs, "fifo.json"), 0o600), os.Mkdir(filepath.Join(recs, "dir.json"), 0o700)); err != nil {
		t.Fatal(err)
	}
	// Reading the FIFO would wait for a writer that never comes; a reap
	// that takes this long is hung, whatever the machine's load.
	f.deadline = 10 * time.Second
	r, rep := f.reap()
	if r.code != 0 && r.code != 1 {
		t.Errorf("tether reap = %s: %s", r, r.stderr)
	}
	f.assertNoSurvivors("after tether reap")
	if a := faultAction(rep, dead.Name); a == nil || a.Class != reap.DeadLeaf || !a.Done {
		t.Errorf("the valid dead record: %+v, want %s, done", a, reap.DeadLeaf)
	}
	for _, name := range []string{"fifo", "dir"} {
		if a := faultAction(rep, name); a == nil || a.Class == "" || a.Plan == "" {
			t.Errorf("records/%s.json: action %+v, want it reported", name, a)
		}
		kept, _ := filepath.Glob(filepath.Join(f.state, "*", name+".json*"))
		if len(kept) == 0 {
			t.Errorf("records/%s.json: gone, neither in records/ nor in quarantine/", name)
		}
	}
	os.Remove(filepath.Join(recs, "fifo.json"))
	os.Remove(filepath.Join(recs, "dir.json"))
	f.checkNoop()
}

// TestFaultForeignFiles gives reap a record it could act on, made
// another user's, open to others, or a symlink: each is reported unsafe
// and neither it nor the live members of its leaf are touched. A state
// directory that is not the user's is refused outright.
func TestFaultForeignFiles(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	dead := f.deadRun()
	p := filepath.Join(f.state, "records", dead.Name+".json")
	elsewhere := filepath.Join(t.TempDir(), dead.Name+".json")
	cases := []struct {
		name         string
		make, undo   func() error
		uid          uint32
		mode         uint32
		symlink      bool
		path, target string
	}{
		{name: "owned-by-65534", uid: 65534, mode: 0o600,
			make: func() error { return os.Chown(p, 65534, 65534) },
			undo: func() error { return os.Chown(p, 0, 0) }},
		{name: "mode-0666", mode: 0o666,
			make: func() error { return os.Chmod(p, 0o666) },
			undo: func() error { return os.Chmod(p, 0o600) }},
		{name: "symlink", symlink: true,
			make: func() error { return errors.Join(os.Rename(p, elsewhere), os.Symlink(elsewhere, p)) },
			undo: func() error { return errors.Join(os.Remove(p), os.Rename(elsewhere, p)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.in(t)
			if err := c.make(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := c.undo(); err != nil {
					t.Fatal(err)
				}
			}()
			data, _ := os.ReadFile(p) // through the symlink, if any
			members := g.survivors()
			r, rep := g.reap()
			t.Logf("tether reap = %s", r)
			a := faultAction(rep, dead.Name)
			if a == nil || a.Class != reap.Unsafe || a.Done || a.Receipt != nil || a.Error == "" {
				t.Errorf("action = %+v, want %s, left alone, with the reason", a, reap.Unsafe)
			}
			for pid, argv := range members {
				if _, ok := g.survivors()[pid]; !ok {
					t.Errorf("member %d %q of the unsafe record's leaf is gone: reap acted on an unsafe record", pid, argv)
				}
			}
			if _, err := os.Stat(dead.Cgroup); err != nil {
				t.Errorf("the unsafe record's leaf: %v", err)
			}
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				t.Fatalf("the unsafe record: %v", err)
			}
			if got := st.Mode&unix.S_IFMT == unix.S_IFLNK; got != c.symlink {
				t.Errorf("records/%s.json is a symlink: %t, want %t", dead.Name, got, c.symlink)
			}
			if !c.symlink && (st.Uid != c.uid || st.Mode&0o777 != c.mode) {
				t.Errorf("records/%s.json: uid %d mode %#o, want uid %d mode %#o untouched", dead.Name, st.Uid, st.Mode&0o777, c.uid, c.mode)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, data) {
				t.Errorf("records/%s.json changed by reap", dead.Name)
			}
		})
	}
	// Made safe again, the record is reaped.
	before := f.recordFiles()
	r, rep := f.reap()
	if r.code != 0 {
		t.Errorf("tether reap = %s: %s", r, r.stderr)
	}
	f.assertNoSurvivors("after the record was made safe and reaped")
	f.checkAccounted(before, rep)
	f.checkNoop()

	t.Run("foreign-quarantine-dir", func(t *testing.T) {
		g := f.in(t)
		q := filepath.Join(f.state, "quarantine")
		if err := errors.Join(os.Mkdir(q, 0o700), os.Chown(q, 65534, 65534)); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(q)
		bad := filepath.Join(f.state, "records", "bad.json")
		if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(bad)
		tree := faultTree(t, f.state)
		r, rep := g.reap()
		if a := faultAction(rep, "bad"); a == nil || a.Class != reap.Corrupt || a.Done || a.Error == "" {
			t.Errorf("action = %+v, want %s, not done: the quarantine dir is another user's", a, reap.Corrupt)
		}
		if r.code != 1 {
			t.Errorf("tether reap = %s, want 1: a corrupt record could not be quarantined", r)
		}
		if got := faultTree(t, f.state); !slices.Equal(got, tree) {
			t.Errorf("state dir changed by reap:\n got %v\nwant %v", got, tree)
		}
	})

	t.Run("foreign-state-dir", func(t *testing.T) {
		g := f.in(t)
		regs := []struct {
			name  string
			setup func(dir string) error
		}{
			{"owned-by-65534", func(d string) error {
				return errors.Join(os.Mkdir(d, 0o700), os.Chown(d, 65534, 65534))
			}},
			{"records-owned-by-65534", func(d string) error {
				r := filepath.Join(d, "records")
				return errors.Join(os.Mkdir(d, 0o700), os.Mkdir(r, 0o700), os.Chown(r, 65534, 65534))
			}},
			{"mode-0755", func(d string) error {
				return errors.Join(os.Mkdir(d, 0o700), os.Chmod(d, 0o755))
			}},
			{"symlink", func(d string) error {
				real := d + "-real"
				return errors.Join(os.Mkdir(real, 0o700), os.Symlink(real, d))
			}},
		}
		for _, c := range regs {
			t.Run(c.name, func(t *testing.T) {
				g := g.in(t)
				xdg := t.TempDir()
				os.Chmod(xdg, 0o700)
				state := filepath.Join(xdg, "tether")
				if err := c.setup(state); err != nil {
					t.Fatal(err)
				}
				tree := faultTree(t, xdg)
				r := g.tether([]string{"XDG_RUNTIME_DIR=" + xdg}, "reap", "--json")
				if r.code != 1 || !strings.Contains(r.stderr, "unsafe") || strings.TrimSpace(r.stdout) != "" {
					t.Errorf("tether reap in %s = %s, stdout %q, stderr %q; want 1, refused as unsafe", state, r, r.stdout, r.stderr)
				}
				if got := faultTree(t, xdg); !slices.Equal(got, tree) {
					t.Errorf("state dir changed by a refused reap:\n got %v\nwant %v", got, tree)
				}
			})
		}
	})
}

// faultTree lists every path under dir with its type, owner and mode.
func faultTree(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %o uid=%d", strings.TrimPrefix(p, dir), st.Mode, st.Uid))
		return nil
	})
	return out
}

// TestFaultLiveLeftAlone checks that a live session and a live `tether
// run` are classed supervised and left alone, orphan-leaf reaping
// included.
func TestFaultLiveLeftAlone(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	if r := f.tether(nil, "start", "--no-reap", "--owner", "none", "--name", "live", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000"); r.code != 0 {
		t.Fatalf("tether start = %s: %s", r, r.stderr)
	}
	run := f.start(nil, "run", "--no-reap", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
	var runName string
	for deadline := time.Now().Add(faultPatience); runName == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, ff := range f.recordFiles() {
			if ff.rec != nil && ff.rec.Kind == "run" && ff.rec.State == registry.StateRunning {
				runName = ff.rec.Name
			}
		}
	}
	if runName == "" {
		t.Fatalf("the background tether run never recorded itself running: %v", f.recordFiles())
	}
	before := f.recordFiles()
	members := f.survivors()
	r, rep := f.reap("--orphan-leaves")
	if r.code != 0 {
		t.Errorf("tether reap --orphan-leaves = %s: %s", r, r.stderr)
	}
	for _, name := range []string{"live", runName} {
		if a := faultAction(rep, name); a == nil || a.Class != reap.Supervised || a.Done || a.Receipt != nil {
			t.Errorf("action for %s = %+v, want %s, left alone", name, a, reap.Supervised)
		}
	}
	if len(rep.OrphanLeaves) != 0 {
		t.Errorf("orphan leaves = %+v, want none: both leaves are recorded", rep.OrphanLeaves)
	}
	f.checkAccounted(before, rep)
	now := f.survivors()
	for pid, argv := range members {
		if _, ok := now[pid]; !ok {
			t.Errorf("pid %d %q gone after reap: reap touched a live session or run", pid, argv)
		}
	}

	if r := f.tether(nil, "stop", "live"); r.code != 0 {
		t.Errorf("tether stop live = %s: %s", r, r.stderr)
	}
	run.cmd.Process.Signal(syscall.SIGTERM)
	if r := run.wait(); r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("tether run after SIGTERM = %s, want exit %d: %s", r, 128+int(syscall.SIGTERM), r.stderr)
	}
	f.assertNoSurvivors("after tether stop and SIGTERM to tether run")
	if rec := f.record(runName); rec != nil {
		t.Errorf("run record %s left after a confirmed stop: %+v", runName, rec)
	}
	f.checkNoop()
}
