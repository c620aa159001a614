package reap_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// The PID-reuse torture runs in a private PID namespace whose pid_max is
// tiny (per namespace since Linux 6.14), so that PIDs wrap every hundred
// forks: past the first wrap the kernel hands out 300..pid_max-1 again and
// again. PID 1 of the namespace is this test binary (reuseInit), which
// reaps every orphan and runs the driver (reuseDriver), also this binary.
// Each cycle the driver crashes tether runs of the fallback mechanism,
// hands their recorded PIDs to innocent processes that log every signal
// they get, runs `tether reap --json`, and reports what it saw as one JSON
// line. The test judges. Killing the namespace's init kills everything in
// it, so nothing outlives the test.

const (
	reuseModeEnv   = "TETHER_REUSE_MODE" // "init" or "driver": what this binary is to be
	reuseFlavorEnv = "TETHER_REUSE_FLAVOR"
	reuseDirEnv    = "TETHER_REUSE_DIR"
	reuseBinEnv    = "TETHER_REUSE_TETHER"
	reuseCyclesEnv = "TETHER_REUSE_CYCLES"
	reuseLogEnv    = "TETHER_REUSE_LOG"
	reuseTIDEnv    = "TETHER_REUSE_TID" // the thread id a thread innocent is to hold
	reusePidMax    = 400
	reuseLastPid   = "/proc/sys/kernel/ns_last_pid"
	// reuseWait bounds every wait of the driver: a hang guard, never an
	// assertion about speed.
	reuseWait = 30 * time.Second
)

// Flavors of cycle.
const (
	// reuseChurn: a record of each kind; PIDs come round by forking.
	reuseChurn = "churn"
	// reuseTick: one reused record; its main's PID is handed out at once
	// through ns_last_pid.
	reuseTick = "tick"
	// reuseThread: one reused record; its main's PID is handed out as in
	// reuseTick, its supervisor's becomes a thread of another process.
	reuseThread = "thread"
)

// Kinds of records a cycle leaves, each by a tether run that died.
const (
	// reuseLeftover: the main process cleared its parent-death signal and
	// outlives tether. Reap must stop it.
	reuseLeftover = "leftover"
	// reuseReused: the main process died with tether (parent-death
	// signal) and an innocent process now has its PID.
	reuseReused = "reused"
	// reuseCrashed: tether crashed at the crash point after-start, before
	// the main process was recorded.
	reuseCrashed = "crashed"
)

// init, not TestMain, turns the binary into the namespace's init or
// driver: it runs before any TestMain, whose leak check must not run in
// (and then kill) the helpers.
func init() {
	switch os.Getenv(reuseModeEnv) {
	case "init":
		os.Exit(reuseInit())
	case "driver":
		os.Exit(reuseDriver())
	case "threads":
		os.Exit(reuseThreads())
	}
}

// reuseInnocentSh is started over and over: the copy that gets one of the
// wanted PIDs ($2) stays, logs every catchable signal it is sent, and
// blocks reading a FIFO ($3) no one writes; every other copy exits at once,
// which is the churn that wraps the PIDs. It forks nothing, so no child of
// it takes a wanted PID.
const reuseInnocentSh = `case " $2 " in *" $$ "*) ;; *) exit 0 ;; esac
log=$1/innocent-$$.log
for s in HUP INT QUIT USR1 USR2 ALRM TERM; do trap "echo $s >>'$log'" $s; done
exec 3<>"$3"
echo ready >"$log.ready"
while :; do read x <&3; done
`

// reuseLeftoverSh is a main process that outlives tether: a real leftover.
// It stops on SIGTERM and says so.
const reuseLeftoverSh = `trap 'echo TERM >>"$1"; exit 0' TERM
exec 3<>"$2"
echo "$$" >"$1.ready"
while :; do read x <&3; done
`

// reuseEvent is one line the namespace reports.
type reuseEvent struct {
	Event  string      `json:"event"` // ready, skip, cycle, error, done
	Reason string      `json:"reason,omitempty"`
	Cycle  *reuseCycle `json:"cycle,omitempty"`
}

// reuseCycle is what the driver saw in one cycle.
type reuseCycle struct {
	N           int            `json:"n"`
	Retries     int            `json:"retries"` // attempts abandoned: a thread of the rig took a wanted PID (placeThread)
	Records     []*reuseRecord `json:"records"`
	Forks       int            `json:"forks"` // processes forked to hand out the wanted PIDs
	Taken       []string       `json:"taken"` // wanted PIDs something else took first
	Reap        *reap.Report   `json:"reap,omitempty"`
	ReapExit    int            `json:"reap_exit"`
	ReapStderr  string         `json:"reap_stderr,omitempty"`
	RecordsLeft []string       `json:"records_left"`
	Errors      []string       `json:"errors"`
}

// reuseRecord is one record a dead tether run left.
type reuseRecord struct {
	Kind       string           `json:"kind"`
	Name       string           `json:"name"`
	Supervisor string           `json:"supervisor"`
	Main       string           `json:"main,omitempty"`
	Leftover   *reuseProc       `json:"leftover,omitempty"`
	Innocents  []*reuseInnocent `json:"innocents"`
}

// reuseProc is a process as the driver saw it after the reap.
type reuseProc struct {
	PID        int    `json:"pid"`
	Token      string `json:"token"`       // before the reap
	Gone       bool   `json:"gone"`        // exited (a zombie counts), or its pid is another's
	TokenAfter string `json:"token_after"` // "" if no process has the pid
	State      string `json:"state,omitempty"`
	Signals    string `json:"signals"` // what its traps logged
	SigPnd     string `json:"sig_pnd,omitempty"`
	ShdPnd     string `json:"shd_pnd,omitempty"`

	log string // where its traps log
}

// reuseInnocent is a process that took a recorded PID, or whose thread
// did.
type reuseInnocent struct {
	Role     string `json:"role"`     // "main" or "supervisor": whose PID it took
	Recorded string `json:"recorded"` // the token the record holds for that PID
	Held     int    `json:"held"`     // that PID
	Thread   bool   `json:"thread"`   // held as the TID of a thread of process PID
	reuseProc
	cmd *exec.Cmd
}

// TestPidReuseReapSignalsNoInnocent: every cycle, tether runs of the
// fallback mechanism die leaving records; one main process lives on (a
// real leftover), two die with tether and their PIDs come round, through
// ordinary forking, to innocent processes, as do the PIDs of all four
// tethers (one crashed at its crash point after-start). tether reap must
// stop each leftover and signal no innocent.
func TestPidReuseReapSignalsNoInnocent(t *testing.T) {
	cycles := 50
	if testing.Short() {
		cycles = 10
	}
	ty := reuseRun(t, reuseChurn, cycles)
	if ty.innocents == 0 || ty.leftovers == 0 {
		t.Errorf("no innocents (%d) or no leftovers (%d): the torture tortured nothing", ty.innocents, ty.leftovers)
	}
	t.Logf("%d cycles in %v: %d forks; %d innocents held recorded PIDs (%d a main's, %d a supervisor's; %d PIDs taken first by others), %d signalled; %d real leftovers, %d stopped (%d on their SIGTERM); %d records reaped",
		ty.cycles, ty.elapsed.Round(time.Millisecond), ty.forks, ty.innocents, ty.innocentMains, ty.innocents-ty.innocentMains, ty.taken, ty.signalled, ty.leftovers, ty.stopped, ty.graceful, ty.records)
}

// TestPidReuseWithinOneClockTick: the main process of a dead run has its
// PID taken by an innocent at once (ns_last_pid set to the PID before it,
// as CRIU does), often within the clock tick (10 ms) in which the main was
// started, so that PID and start time are the same: only the pidfs inode
// in the token tells the two apart. tether reap must still signal no
// innocent.
func TestPidReuseWithinOneClockTick(t *testing.T) {
	ty := reuseRun(t, reuseTick, 30)
	t.Logf("%d cycles in %v: %d innocents took a dead main's PID, %d within the clock tick it was started in (same pid and start time); %d signalled",
		ty.cycles, ty.elapsed.Round(time.Millisecond), ty.innocents, ty.sameTick, ty.signalled)
	if ty.sameTick == 0 {
		t.Skipf("no PID came back within the clock tick of its last start in %d cycles", ty.cycles)
	}
}

// TestPidReuseSupervisorPidNowAThread: a dead run's supervisor PID now
// belongs to a thread of another process (threads take PIDs as processes
// do), and its main's to an innocent process. No process has the
// supervisor's PID, so the supervisor is dead: tether reap must reap the
// record, and signal neither innocent.
func TestPidReuseSupervisorPidNowAThread(t *testing.T) {
	ty := reuseRun(t, reuseThread, 20)
	t.Logf("%d cycles in %v: %d innocents (%d holding a main's PID, %d a supervisor's as a thread), %d signalled; %d records reaped",
		ty.cycles, ty.elapsed.Round(time.Millisecond), ty.innocents, ty.innocentMains, ty.innocents-ty.innocentMains, ty.signalled, ty.records)
}

// reuseRun runs cycles of the flavor in a fresh PID namespace and judges
// each.
func reuseRun(t *testing.T, flavor string, cycles int) *reuseTally {
	for _, tool := range []string{"unshare", "setpriv", "sh", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found (util-linux, coreutils): %v", tool, err)
		}
	}
	if err := pidMaxPerNamespace(); err != nil {
		t.Skipf("pid_max is not per PID namespace here (Linux < 6.14): writing it in the namespace would set the whole machine's: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go toolchain not found to build tether with crash points: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "tether")
	build := exec.Command(goBin, "build", "-tags", "crashpoints", "-o", bin, "../../cmd/tether")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags crashpoints ../../cmd/tether: %v\n%s", err, out)
	}
	hostMax, _ := os.ReadFile("/proc/sys/kernel/pid_max")

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // hang guard
	defer cancel()
	// --kill-child: if unshare dies, so does the namespace's init, and with
	// it everything in the namespace.
	cmd := exec.CommandContext(ctx, "unshare", "-p", "-f", "--mount-proc", "--kill-child", self)
	cmd.Env = append(os.Environ(), reuseModeEnv+"=init", reuseFlavorEnv+"="+flavor, reuseDirEnv+"="+dir,
		reuseBinEnv+"="+bin, reuseCyclesEnv+"="+strconv.Itoa(cycles))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start unshare: %v", err)
	}
	ty := &reuseTally{}
	var ready, done bool
	var skip string
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev reuseEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Errorf("namespace printed %q: %v", sc.Text(), err)
			continue
		}
		switch ev.Event {
		case "ready":
			ready = true
		case "skip":
			skip = ev.Reason
		case "error":
			t.Errorf("namespace: %s", ev.Reason)
		case "cycle":
			reuseJudge(t, ev.Cycle, ty)
		case "done":
			done = true
		}
	}
	werr := cmd.Wait()
	ty.elapsed = time.Since(t0)
	switch {
	case skip != "":
		t.Skip(skip)
	case !ready && strings.Contains(stderr.String(), "unshare failed"):
		t.Skipf("cannot create a PID namespace: %s", strings.TrimSpace(stderr.String()))
	case werr != nil || !done:
		t.Fatalf("unshare -p -f --mount-proc: %v (done %t)\nstderr:\n%s", werr, done, stderr.String())
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/pid_max"); !bytes.Equal(now, hostMax) {
		t.Errorf("host pid_max = %q after the test, want %q: the namespace's pid_max leaked", now, hostMax)
	}
	if ty.cycles != cycles {
		t.Errorf("cycles reported = %d, want %d", ty.cycles, cycles)
	}
	return ty
}

// pidMaxPerNamespace probes, without changing anything, whether pid_max
// belongs to the PID namespace (Linux 6.14+) or is global (before): an
// unprivileged user in a new user and PID namespace writes the current
// value back. From 6.14 the namespace's owner may write its pid_max; before,
// the one global sysctl is writable by the host's root only. Root runs the
// probe as nobody, since its user namespace would map to the host's root.
var pidMaxPerNamespace = sync.OnceValue(func() error {
	argv := []string{"unshare", "-U", "-r", "-p", "-f", "--mount-proc",
		"sh", "-c", "cat /proc/sys/kernel/pid_max > /proc/sys/kernel/pid_max"}
	if os.Geteuid() == 0 {
		argv = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, argv...)
	}
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, bytes.TrimSpace(out))
	}
	return nil
})

// reuseTally counts across cycles.
type reuseTally struct {
	cycles, forks, records                        int
	innocents, innocentMains, sameTick, signalled int
	taken                                         int
	leftovers, stopped, graceful                  int
	elapsed                                       time.Duration
}

// reuseJudge checks one cycle.
func reuseJudge(t *testing.T, c *reuseCycle, ty *reuseTally) {
	t.Helper()
	ty.cycles++
	ty.forks += c.Forks
	ty.taken += len(c.Taken)
	for _, x := range c.Taken {
		t.Logf("cycle %d: %s", c.N, x)
	}
	for _, e := range c.Errors {
		t.Errorf("cycle %d: %s", c.N, e)
	}
	if c.Reap == nil {
		if len(c.Errors) > 0 {
			return
		}
		t.Errorf("cycle %d: no reap report (exit %d): %s", c.N, c.ReapExit, c.ReapStderr)
		return
	}
	if c.ReapExit != 0 {
		t.Errorf("cycle %d: tether reap --json exit = %d, want 0; stderr %q", c.N, c.ReapExit, c.ReapStderr)
	}
	acts := map[string]reap.Action{}
	for _, a := range c.Reap.Actions {
		acts[a.Name] = a
	}
	for _, r := range c.Records {
		for _, inn := range r.Innocents {
			ty.innocents++
			if inn.Role == "main" {
				ty.innocentMains++
			}
			sameTick := reuseSameTick(inn.Token, inn.Recorded)
			if sameTick {
				ty.sameTick++
			}
			if why := reuseHarmed(&inn.reuseProc); why != "" {
				ty.signalled++
				holder := "pid"
				if inn.Thread {
					holder = fmt.Sprintf("thread %d of pid", inn.Held)
				}
				t.Errorf("cycle %d: innocent %s %d (holding the %s pid of %s record %s, recorded %s; innocent %s): %s",
					c.N, holder, inn.PID, inn.Role, r.Kind, r.Name, inn.Recorded, inn.Token, why)
				if sameTick {
					t.Logf("cycle %d: pid %d was reused within the clock tick of its recorded start: only the pidfs inode tells the two apart", c.N, inn.PID)
				}
			}
		}
		a, ok := acts[r.Name]
		if !ok {
			t.Errorf("cycle %d: reap reported nothing for %s record %s", c.N, r.Kind, r.Name)
			continue
		}
		want := reap.DeadFallback
		if r.Kind == reuseCrashed {
			want = reap.DeadEmpty
		}
		if a.Class != want || !a.Done || a.Error != "" {
			t.Errorf("cycle %d: %s record %s: class %s, done %t, error %q; want %s, done", c.N, r.Kind, r.Name, a.Class, a.Done, a.Error, want)
		} else {
			ty.records++
		}
		if r.Kind == reuseCrashed {
			continue
		}
		rc := a.Receipt
		if rc == nil {
			t.Errorf("cycle %d: %s record %s: no receipt", c.N, r.Kind, r.Name)
			continue
		}
		if !rc.StopConfirmed {
			t.Errorf("cycle %d: %s record %s: stop_confirmed false: %+v", c.N, r.Kind, r.Name, rc.Evidence)
		}
		switch r.Kind {
		case reuseReused:
			// The reap must have seen the innocent at the pid and told it
			// apart, not merely found the pid free.
			if rc.Evidence.Signalled != 0 || rc.Evidence.MembersSeen != 0 {
				t.Errorf("cycle %d: reused record %s: signalled %d, members seen %d; want 0, 0", c.N, r.Name, rc.Evidence.Signalled, rc.Evidence.MembersSeen)
			}
			held := slices.ContainsFunc(r.Innocents, func(x *reuseInnocent) bool { return x.Role == "main" })
			if len(rc.Stop.Steps) == 0 || rc.Stop.Steps[0].Name != "identify" || held && !strings.Contains(rc.Stop.Steps[0].Observed, "does not match token") {
				t.Errorf("cycle %d: reused record %s: steps %+v; want an identify step that found another process at the pid", c.N, r.Name, rc.Stop.Steps)
			}
		case reuseLeftover:
			ty.leftovers++
			l := r.Leftover
			if rc.Evidence.Signalled != 1 || rc.Evidence.ConfirmedGone != 1 {
				t.Errorf("cycle %d: leftover record %s: signalled %d, confirmed gone %d; want 1, 1", c.N, r.Name, rc.Evidence.Signalled, rc.Evidence.ConfirmedGone)
			}
			if l == nil || !l.Gone {
				t.Errorf("cycle %d: leftover %+v of record %s still runs after the reap", c.N, l, r.Name)
				continue
			}
			ty.stopped++
			if strings.Contains(l.Signals, "TERM") {
				ty.graceful++
			}
		}
	}
	if len(c.RecordsLeft) != 0 {
		t.Errorf("cycle %d: records left after the reap: %v", c.N, c.RecordsLeft)
	}
}

// reuseHarmed says how an innocent process was touched, or "".
func reuseHarmed(p *reuseProc) string {
	zero := func(mask string) bool { return strings.Trim(mask, "0") == "" }
	var harm []string
	if p.Gone {
		harm = append(harm, fmt.Sprintf("gone after the reap (pid now %q, state %q)", p.TokenAfter, p.State))
	} else if strings.ContainsAny(p.State, "Tt") {
		harm = append(harm, "stopped (state "+p.State+") after the reap")
	}
	if p.Signals != "" {
		harm = append(harm, fmt.Sprintf("its traps logged %q", p.Signals))
	}
	if !zero(p.SigPnd) || !zero(p.ShdPnd) {
		harm = append(harm, fmt.Sprintf("signals pending: SigPnd %s ShdPnd %s", p.SigPnd, p.ShdPnd))
	}
	return strings.Join(harm, "; ")
}

// reuseInit is PID 1 of the namespace: it shrinks pid_max, runs the
// driver, reaps every process that ends up its child, and when the driver
// exits kills whatever is left.
func reuseInit() int {
	enc := json.NewEncoder(os.Stdout)
	if os.Getpid() != 1 {
		enc.Encode(reuseEvent{Event: "error", Reason: fmt.Sprintf("init is pid %d, not 1", os.Getpid())})
		return 1
	}
	const f = "/proc/sys/kernel/pid_max"
	if err := os.WriteFile(f, []byte(strconv.Itoa(reusePidMax)), 0); err != nil {
		enc.Encode(reuseEvent{Event: "skip", Reason: fmt.Sprintf("this kernel refuses pid_max in a PID namespace (per-namespace since Linux 6.14): %v", err)})
		return 0
	}
	if b, err := os.ReadFile(f); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(reusePidMax) {
		enc.Encode(reuseEvent{Event: "skip", Reason: fmt.Sprintf("pid_max in the namespace is %q (%v) after writing %d", b, err, reusePidMax)})
		return 0
	}
	enc.Encode(reuseEvent{Event: "ready"})
	self, err := os.Executable()
	if err != nil {
		enc.Encode(reuseEvent{Event: "error", Reason: err.Error()})
		return 1
	}
	driver, err := os.StartProcess(self, []string{self}, &os.ProcAttr{
		Env:   reuseSetenv(os.Environ(), reuseModeEnv, "driver"),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		enc.Encode(reuseEvent{Event: "error", Reason: err.Error()})
		return 1
	}
	code := 1
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return code // ECHILD: nothing is left
		}
		if pid == driver.Pid {
			if code = ws.ExitStatus(); ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
			syscall.Kill(-1, syscall.SIGKILL)
		}
	}
}

// reuseSetenv returns env with k set to v, once: a child Go process reads
// the first of duplicate variables.
func reuseSetenv(env []string, k, v string) []string {
	out := []string{}
	for _, kv := range env {
		if !strings.HasPrefix(kv, k+"=") {
			out = append(out, kv)
		}
	}
	return append(out, k+"="+v)
}

// reuseRig is the driver's state.
type reuseRig struct {
	flavor                   string
	dir, tether, sh, setpriv string
	self                     string
	fifo                     string // never written: innocents and leftovers block reading it
	env                      []string
}

// reuseDriver runs the cycles and reports each as a JSON line.
func reuseDriver() int {
	enc := json.NewEncoder(os.Stdout)
	r := &reuseRig{flavor: os.Getenv(reuseFlavorEnv), dir: os.Getenv(reuseDirEnv), tether: os.Getenv(reuseBinEnv)}
	if r.flavor != reuseChurn {
		b, err := os.ReadFile(reuseLastPid)
		if err == nil {
			err = os.WriteFile(reuseLastPid, b, 0)
		}
		if err != nil {
			enc.Encode(reuseEvent{Event: "skip", Reason: "cannot set ns_last_pid (CONFIG_CHECKPOINT_RESTORE): " + err.Error()})
			return 0
		}
	}
	var err error
	if r.self, err = os.Executable(); err == nil {
		r.sh, err = exec.LookPath("sh")
	}
	if err == nil {
		r.setpriv, err = exec.LookPath("setpriv")
	}
	if err != nil {
		enc.Encode(reuseEvent{Event: "error", Reason: err.Error()})
		return 1
	}
	r.env = reuseSetenv(os.Environ(), reuseModeEnv, "")
	r.fifo = filepath.Join(r.dir, "fifo")
	if err := syscall.Mkfifo(r.fifo, 0o600); err != nil {
		enc.Encode(reuseEvent{Event: "error", Reason: "mkfifo: " + err.Error()})
		return 1
	}
	// PIDs below 300 never come back (the kernel wraps to 300, keeping
	// the low ones for daemons): churn until the PIDs have wrapped once.
	for last := 0; ; {
		cmd := exec.Command(r.sh, "-c", "exit 0")
		if err := cmd.Run(); err != nil {
			enc.Encode(reuseEvent{Event: "error", Reason: err.Error()})
			return 1
		}
		if cmd.Process.Pid < last {
			break
		}
		last = cmd.Process.Pid
	}
	n, _ := strconv.Atoi(os.Getenv(reuseCyclesEnv))
	for i := range n {
		c := &reuseCycle{N: i, Records: []*reuseRecord{}, Taken: []string{}, RecordsLeft: []string{}, Errors: []string{}}
		err := r.cycle(c)
		for retries := 1; errors.Is(err, errRigHoldsPID) && retries <= 5; retries++ {
			c = &reuseCycle{N: i, Retries: retries, Records: []*reuseRecord{}, Taken: []string{}, RecordsLeft: []string{}, Errors: []string{}}
			err = r.cycle(c)
		}
		if err != nil {
			c.Errors = append(c.Errors, err.Error())
		}
		enc.Encode(reuseEvent{Event: "cycle", Cycle: c})
		if len(c.Errors) > 0 {
			return 1
		}
	}
	enc.Encode(reuseEvent{Event: "done"})
	return 0
}

// cycle leaves records (churn: one of each kind, two reused; tick: one
// reused), hands recorded PIDs to innocents, reaps, and looks at every
// process involved.
func (r *reuseRig) cycle(c *reuseCycle) error {
	cdir := filepath.Join(r.dir, fmt.Sprintf("c%03d-%d", c.N, c.Retries))
	if err := os.Mkdir(cdir, 0o700); err != nil {
		return err
	}
	reg, err := store.Open(filepath.Join(cdir, "tether"))
	if err != nil {
		return err
	}
	// No owner-death watcher: the dead runs' records are left for reap,
	// whose identity checks this test is about.
	env := append(reuseSetenv(r.env, "XDG_RUNTIME_DIR", cdir), "TETHER_NO_REAP=1", "TETHER_NO_WATCH=1")
	defer r.cleanup(c)

	// Every tether and main process is alive at once until the crashed
	// one has run, so that no two recorded PIDs are the same.
	var running []*exec.Cmd
	defer func() {
		for _, cmd := range running {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	kinds := []string{reuseLeftover, reuseReused, reuseReused, reuseCrashed}
	if r.flavor != reuseChurn {
		kinds = []string{reuseReused}
	}
	for i, kind := range kinds {
		rec, cmd, err := r.crashRun(reg, env, cdir, kind, i)
		if rec != nil {
			c.Records = append(c.Records, rec)
		}
		if cmd != nil {
			running = append(running, cmd)
		}
		if err != nil {
			return err
		}
	}
	for _, cmd := range running {
		cmd.Process.Kill() // tether dies; a main without the parent-death signal lives on
		cmd.Wait()
	}
	running = nil

	if err := r.hunt(c, cdir); err != nil {
		return err
	}

	// A short grace: a leftover stops on SIGTERM at once, and an innocent
	// wrongly signalled should not cost the default 2s.
	reapCmd := exec.Command(r.tether, "reap", "--json", "--grace", "200ms")
	reapCmd.Env = env
	var stderr bytes.Buffer
	reapCmd.Stderr = &stderr
	out, err := reapCmd.Output()
	c.ReapStderr = stderr.String()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		c.ReapExit = ee.ExitCode()
	} else if err != nil {
		return fmt.Errorf("tether reap: %w", err)
	}
	c.Reap = &reap.Report{}
	if err := json.Unmarshal(out, c.Reap); err != nil {
		return fmt.Errorf("tether reap --json printed %q: %w", out, err)
	}

	for _, rec := range c.Records {
		for _, inn := range rec.Innocents {
			reuseLook(&inn.reuseProc)
		}
		if l := rec.Leftover; l != nil {
			// A stop reap confirmed left at most a zombie.
			reuseLook(l)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(reg.Dir, "records"))
	for _, e := range ents {
		c.RecordsLeft = append(c.RecordsLeft, e.Name())
	}
	return nil
}

// crashRun starts a tether run of the given kind, waits until its record
// names its main process, and returns the record and the still running
// tether (nil for the crashed kind, which is already dead).
func (r *reuseRig) crashRun(reg *store.Registry, env []string, cdir, kind string, i int) (*reuseRecord, *exec.Cmd, error) {
	args := []string{"run", "--mechanism", "fallback", "--no-reap", "--quiet", "--"}
	var ready string
	switch kind {
	case reuseLeftover:
		ready = filepath.Join(cdir, fmt.Sprintf("leftover-r%d.log", i))
		args = append(args, r.setpriv, "--pdeathsig", "clear", "--", r.sh, "-c", reuseLeftoverSh, "sh", ready, r.fifo)
		ready += ".ready"
	default:
		args = append(args, "sleep", "1000")
	}
	cmd := exec.Command(r.tether, args...)
	cmd.Env = env
	if kind == reuseCrashed {
		cmd.Env = append(env, "TETHER_CRASH_AT=after-start")
	}
	// A file, not a pipe: the main process inherits it and may outlive
	// tether.
	errPath := filepath.Join(cdir, fmt.Sprintf("tether-%d.stderr", i))
	errFile, err := os.Create(errPath)
	if err != nil {
		return nil, nil, err
	}
	defer errFile.Close()
	cmd.Stderr = errFile
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	tpid := cmd.Process.Pid
	var rec *registry.Record
	var recs []*registry.Record
	var recErrs []error
	find := func(want func(*registry.Record) bool) bool {
		recs, recErrs = reg.List()
		for _, x := range recs {
			if tok, err := identity.Parse(x.Supervisor); err == nil && tok.PID == tpid && want(x) {
				rec = x
				return true
			}
		}
		return false
	}
	if kind == reuseCrashed {
		err := cmd.Wait()
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			return nil, nil, fmt.Errorf("tether run with TETHER_CRASH_AT=after-start: %v, want killed by its crash point", err)
		}
		if !find(func(*registry.Record) bool { return true }) {
			return nil, nil, fmt.Errorf("tether pid %d crashed at after-start without a record", tpid)
		}
		return &reuseRecord{Kind: kind, Name: rec.Name, Supervisor: rec.Supervisor, Main: rec.Main, Innocents: []*reuseInnocent{}}, nil, nil
	}
	err = reuseUntil(fmt.Sprintf("the record of tether pid %d to name its main process", tpid), func() bool {
		if st, err := identity.ReadStat(tpid); err == nil && st.State == 'Z' {
			return true // exited: said below
		}
		return find(func(x *registry.Record) bool { return x.State == registry.StateRunning && x.Main != "" })
	})
	if err != nil || rec == nil {
		stderr, _ := os.ReadFile(errPath)
		b, _ := json.Marshal(recs)
		return nil, cmd, fmt.Errorf("tether pid %d (%v): no record naming its main process: records %s, errors %v; tether stderr %q", tpid, err, b, recErrs, stderr)
	}
	out := &reuseRecord{Kind: kind, Name: rec.Name, Supervisor: rec.Supervisor, Main: rec.Main, Innocents: []*reuseInnocent{}}
	if kind == reuseLeftover {
		var b []byte
		// Ready means setpriv has cleared the parent-death signal and
		// exec'd the script.
		err := reuseUntil("the leftover to be ready", func() bool {
			b, _ = os.ReadFile(ready)
			return bytes.HasSuffix(b, []byte("\n"))
		})
		if err != nil {
			return out, cmd, err
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		tok, err := reuseToken(pid)
		if err != nil {
			return out, cmd, err
		}
		if !reuseSame(rec.Main, tok.String()) {
			return out, cmd, fmt.Errorf("leftover %s is not the recorded main %s", tok, rec.Main)
		}
		out.Leftover = &reuseProc{PID: pid, Token: tok.String(), log: strings.TrimSuffix(ready, ".ready")}
	}
	return out, cmd, nil
}

// hunt hands recorded PIDs of c to innocent processes: in the churn
// flavor each supervisor's and each dead main's, by forking copies of
// reuseInnocentSh until each PID has come round to one of them; in the
// tick flavor each dead main's, at once, through ns_last_pid; in the
// thread flavor the same, and each supervisor's to a thread of another
// process.
func (r *reuseRig) hunt(c *reuseCycle, cdir string) error {
	wants := map[int]*reuseInnocent{}
	add := func(rec *reuseRecord, role, recorded string) error {
		tok, err := identity.Parse(recorded)
		if err != nil {
			return fmt.Errorf("%s record %s: %s token: %w", rec.Kind, rec.Name, role, err)
		}
		if wants[tok.PID] != nil {
			return fmt.Errorf("pid %d recorded twice in one cycle", tok.PID)
		}
		inn := &reuseInnocent{Role: role, Recorded: recorded, Held: tok.PID}
		inn.PID, inn.log = tok.PID, filepath.Join(cdir, fmt.Sprintf("innocent-%d.log", tok.PID))
		inn.Thread = role == "supervisor" && r.flavor == reuseThread
		wants[tok.PID] = inn
		rec.Innocents = append(rec.Innocents, inn)
		// The dead are collected by init (mains) or by us (tethers).
		return reuseUntil(fmt.Sprintf("pid %d to be free", tok.PID), func() bool {
			_, err := os.Stat("/proc/" + strconv.Itoa(tok.PID))
			return errors.Is(err, os.ErrNotExist)
		})
	}
	for _, rec := range c.Records {
		var err error
		if r.flavor != reuseTick {
			err = add(rec, "supervisor", rec.Supervisor)
		}
		if err == nil && rec.Kind == reuseReused {
			err = add(rec, "main", rec.Main)
		}
		if err != nil {
			return err
		}
	}
	var list []string
	pending := 0
	for pid, inn := range wants {
		if !inn.Thread {
			list = append(list, strconv.Itoa(pid))
			pending++
		}
	}
	for pending > 0 {
		if c.Forks >= 10*reusePidMax {
			return fmt.Errorf("pids %v: %d not handed out after %d forks", list, pending, c.Forks)
		}
		// A thread the Go runtime of init or of this driver starts may
		// take a wanted PID first, and keep it.
		for pid, inn := range wants {
			if st, err := identity.ReadStat(pid); inn.cmd == nil && !inn.Thread && err == nil {
				c.Taken = append(c.Taken, fmt.Sprintf("pid %d (%s) taken by %q before an innocent could have it", pid, inn.Role, st.Comm))
				delete(wants, pid)
				pending--
				for _, rec := range c.Records {
					rec.Innocents = slices.DeleteFunc(rec.Innocents, func(x *reuseInnocent) bool { return x == inn })
				}
			}
		}
		if pending == 0 {
			break
		}
		if r.flavor != reuseChurn {
			for pid, inn := range wants {
				if inn.cmd == nil && !inn.Thread {
					// The next PID handed out is the one after ns_last_pid.
					if err := os.WriteFile(reuseLastPid, []byte(strconv.Itoa(pid-1)), 0); err != nil {
						return err
					}
					break
				}
			}
		}
		c.Forks++
		cmd := exec.Command(r.sh, "-c", reuseInnocentSh, "sh", cdir, strings.Join(list, " "), r.fifo)
		cmd.Env = r.env
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("fork %d: %w", c.Forks, err)
		}
		if inn := wants[cmd.Process.Pid]; inn != nil && inn.cmd == nil && !inn.Thread {
			inn.cmd = cmd
			pending--
			continue
		}
		cmd.Wait()
	}
	for _, inn := range wants {
		if inn.Thread {
			if err := r.placeThread(c, inn); err != nil {
				return err
			}
		}
	}
	for _, inn := range wants {
		err := reuseUntil(fmt.Sprintf("innocent %d to set its traps", inn.PID), func() bool {
			b, _ := os.ReadFile(inn.log + ".ready")
			return bytes.HasSuffix(b, []byte("\n"))
		})
		if err != nil {
			return err
		}
		tok, err := reuseToken(inn.PID)
		if err != nil {
			return err
		}
		inn.Token = tok.String()
	}
	return nil
}

// errRigHoldsPID is placeThread's: a thread of the rig holds the PID a
// thread innocent needs.
var errRigHoldsPID = errors.New("a thread of the rig holds pid")

// placeThread starts copies of this binary as reuseThreads, the next PID
// set a little before inn.Held, until a thread (not the main thread) of
// one of them has inn.Held as its TID.
func (r *reuseRig) placeThread(c *reuseCycle, inn *reuseInnocent) error {
	for attempt := range 50 {
		if reuseTgid(inn.Held) == os.Getpid() {
			// A thread of this rig's own runtime took the PID (seen in
			// CI): it keeps it as long as the rig lives, so no innocent
			// can have it. The cycle is run again from the start.
			return fmt.Errorf("%w %d", errRigHoldsPID, inn.Held)
		}
		c.Forks++
		if err := os.WriteFile(reuseLastPid, []byte(strconv.Itoa(inn.Held-2-attempt%4)), 0); err != nil {
			return err
		}
		cmd := exec.Command(r.self)
		cmd.Env = append(reuseSetenv(r.env, reuseModeEnv, "threads"), reuseLogEnv+"="+inn.log, reuseTIDEnv+"="+strconv.Itoa(inn.Held))
		if err := cmd.Start(); err != nil {
			return err
		}
		err := reuseUntil("a thread innocent to be ready", func() bool {
			_, err := os.Stat(inn.log + ".ready")
			return err == nil
		})
		if err == nil && cmd.Process.Pid != inn.Held && reuseTgid(inn.Held) == cmd.Process.Pid {
			inn.cmd, inn.PID = cmd, cmd.Process.Pid
			return nil
		}
		cmd.Process.Kill()
		cmd.Wait()
		os.Remove(inn.log + ".ready")
		if err != nil {
			return err
		}
	}
	return fmt.Errorf("no thread got pid %d in 50 tries (now held by process %d; this rig is %d)", inn.Held, reuseTgid(inn.Held), os.Getpid())
}

// reuseTgid returns the process whose task tid is, or 0.
func reuseTgid(tid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// reuseThreads is an innocent process of several threads: it logs every
// catchable signal it is sent.
func reuseThreads() int {
	log := os.Getenv(reuseLogEnv)
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGTERM)
	// Each goroutine locked to its thread while blocked holds that
	// thread, so the process has at least this many besides its main one.
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			runtime.LockOSThread()
			wg.Done()
			select {}
		}()
	}
	wg.Wait()
	// More threads until one holds the wanted id or the ids pass it: the
	// rig's own runtime may take ids between the ns_last_pid write and
	// these threads (under load and -race it does), which a fixed number
	// of threads missed.
	if want, err := strconv.Atoi(os.Getenv(reuseTIDEnv)); err == nil {
		for range 64 {
			tids := make(chan int)
			go func() {
				runtime.LockOSThread()
				tids <- syscall.Gettid()
				select {}
			}()
			if tid := <-tids; tid >= want {
				break
			}
		}
	}
	if err := os.WriteFile(log+".ready", []byte("ready\n"), 0o600); err != nil {
		return 1
	}
	for sig := range sigs {
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			fmt.Fprintln(f, sig)
			f.Close()
		}
	}
	return 0
}

// cleanup kills the cycle's innocents and whatever is left of its
// leftovers, through identities that cannot have been reused.
func (r *reuseRig) cleanup(c *reuseCycle) {
	for _, rec := range c.Records {
		for _, inn := range rec.Innocents {
			if inn.cmd != nil {
				inn.cmd.Process.Kill()
				inn.cmd.Wait()
			}
		}
		if l := rec.Leftover; l != nil {
			tok, _ := identity.Parse(l.Token)
			if h, err := identity.Open(tok); err == nil {
				h.Signal(syscall.SIGKILL)
				h.Close()
			}
		}
	}
}

// reuseLook reads what became of p.
func reuseLook(p *reuseProc) {
	b, _ := os.ReadFile(p.log)
	p.Signals = strings.TrimSpace(string(b))
	p.Gone, p.TokenAfter, p.State, p.SigPnd, p.ShdPnd = true, "", "", "", ""
	st, err := identity.ReadStat(p.PID)
	if err != nil {
		return
	}
	p.State = string(st.State)
	if st.State == 'Z' || st.State == 'X' {
		return
	}
	tok, err := reuseToken(p.PID)
	if err != nil {
		return
	}
	p.TokenAfter = tok.String()
	p.Gone = !reuseSame(p.Token, p.TokenAfter)
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/status")
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "SigPnd:"); ok {
			p.SigPnd = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "ShdPnd:"); ok {
			p.ShdPnd = strings.TrimSpace(v)
		}
	}
}

// reuseToken returns the token of the live process pid, with its pidfs
// inode where the kernel has one.
func reuseToken(pid int) (identity.Token, error) {
	h, err := identity.OpenPID(pid)
	if err != nil {
		return identity.Token{}, err
	}
	defer h.Close()
	return h.Token, nil
}

// reuseSame reports whether two tokens name the same process.
func reuseSame(a, b string) bool {
	ta, err1 := identity.Parse(a)
	tb, err2 := identity.Parse(b)
	return err1 == nil && err2 == nil && ta.Matches(tb)
}

// reuseSameTick reports whether two tokens have the same boot, pid and
// start time: without the pidfs inode, the same process.
func reuseSameTick(a, b string) bool {
	ta, err1 := identity.Parse(a)
	tb, err2 := identity.Parse(b)
	return err1 == nil && err2 == nil && ta.Key() == tb.Key()
}

// reuseUntil polls f until it holds, or gives up after reuseWait.
func reuseUntil(what string, f func() bool) error {
	deadline := time.Now().Add(reuseWait)
	for !f() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %v waiting for %s", reuseWait, what)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}
