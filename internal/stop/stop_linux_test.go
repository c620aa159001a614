package stop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/oldkernel"
	"github.com/tether-run/tether/receipt"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// group is a leaf with a shell script started into it.
type group struct {
	leaf *cgroup.Leaf
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
}

// startGroup creates a leaf and starts script in it ($D is a private
// temp dir); it returns once $D/ready exists.
func startGroup(t *testing.T, script string, env ...string) *group {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: creates cgroups")
	}
	parent, err := cgroup.DefaultParent()
	if err == nil {
		err = cgroup.CheckParent(parent)
	}
	if err != nil {
		t.Skipf("needs a writable cgroup v2 parent: %v", err)
	}
	l, err := cgroup.Create(parent)
	if err != nil {
		t.Fatal(err)
	}
	g := &group{leaf: l, dir: t.TempDir(), done: make(chan struct{})}
	fd, release, _ := l.StartFD()
	g.cmd = exec.Command("sh", "-c", script)
	g.cmd.Env = append(append(os.Environ(), "D="+g.dir), env...)
	g.cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	err = g.cmd.Start()
	release()
	if err != nil {
		l.Remove()
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); close(g.done) }()
	t.Cleanup(func() {
		// Whatever the test did, nothing is left: kill what is in the
		// leaf (the path may be gone) and remove it.
		os.WriteFile(filepath.Join(l.Path, "cgroup.freeze"), []byte("0"), 0)
		os.WriteFile(filepath.Join(l.Path, "cgroup.kill"), []byte("1"), 0)
		<-g.done
		for range 200 {
			if err := os.Remove(l.Path); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		l.Close()
	})
	ready := filepath.Join(g.dir, "ready")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never became ready", script)
		}
	}
}

// stop runs the protocol on g, reaping the shell as its parent.
func (g *group) stop(grace time.Duration) *Run {
	r := &Run{Leaf: g.leaf, Policy: Policy{Grace: grace, KillWait: 5 * time.Second}}
	r.Reap = func(deadline time.Time) (string, error) {
		select {
		case <-g.done:
			return "shell reaped", nil
		case <-time.After(time.Until(deadline)):
			return "shell not reaped", nil
		}
	}
	r.Do()
	return r
}

func step(r *Run, name string) *receipt.Step {
	for i := range r.Steps {
		if r.Steps[i].Name == name {
			return &r.Steps[i]
		}
	}
	return nil
}

// checkStopped fails t unless r proved the group stopped and removed.
func checkStopped(t *testing.T, r *Run) {
	t.Helper()
	ev := r.Evidence
	if !ev.Empty || len(ev.Unconfirmed) != 0 || !ev.LeafRemoved {
		t.Errorf("evidence = %+v, want empty, every member confirmed gone, leaf removed\nsteps: %+v", ev, r.Steps)
	}
	if _, err := os.Stat(r.Leaf.Path); !os.IsNotExist(err) {
		t.Errorf("leaf %s still there: %v", r.Leaf.Path, err)
	}
}

const obeysTERM = `sleep 1000 & sleep 1000 & touch "$D/ready"; wait`
const ignoresTERM = `trap "" TERM; setsid sh -c 'trap "" TERM; sleep 1000' & (trap "" TERM; sleep 1000 &); touch "$D/ready"; sleep 1000`

// TestProcMembership forces the path of kernels without PIDFD_GET_INFO
// (before 6.13): members are proven by /proc/PID/cgroup, get SIGTERM, and
// the receipt says how they were proven.
func TestProcMembership(t *testing.T) {
	defer oldkernel.Force(true, false)()
	g := startGroup(t, obeysTERM)
	r := g.stop(10 * time.Second)
	checkStopped(t, r)
	if r.Evidence.MembersSeen < 3 || r.Evidence.Signalled < 3 || r.Evidence.KillUsed {
		t.Errorf("evidence = %+v, want >= 3 members seen and signalled, no kill: SIGTERM suffices", r.Evidence)
	}
	if !strings.Contains(strings.Join(r.Caveats, "\n"), CaveatProcMembership) {
		t.Errorf("caveats = %q, want the /proc membership caveat", r.Caveats)
	}
}

// TestFreezeKill forces the path of kernels without cgroup.kill (5.7–5.13)
// on a TERM-ignoring tree and on a fork storm: the leaf is frozen, every
// member SIGKILLed through its pidfd, thawed, until empty.
func TestFreezeKill(t *testing.T) {
	for _, tc := range []struct{ name, script string }{
		{"TERM-ignoring tree", ignoresTERM},
		{"fork storm", `trap "" TERM; touch "$D/ready"; while :; do (trap "" TERM; sleep 1000 &); sh -c 'trap "" TERM; sleep 1000' & done`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer oldkernel.Force(false, true)()
			g := startGroup(t, tc.script)
			r := g.stop(100 * time.Millisecond)
			checkStopped(t, r)
			k := step(r, "kill")
			if k == nil || !strings.HasPrefix(k.Observed, KilledByFreeze) || k.Error != "" {
				t.Errorf("kill step = %+v, want %q without error", k, KilledByFreeze)
			}
			if !strings.Contains(strings.Join(r.Caveats, "\n"), CaveatFreezeKill) {
				t.Errorf("caveats = %q, want the freeze+sigkill caveat", r.Caveats)
			}
			if r.Leaf.Killed() {
				t.Errorf("cgroup.kill was written, want freeze+sigkill only")
			}
		})
	}
}

// TestStoppedMemberGetsTERM: a SIGSTOP'd member keeps SIGTERM pending;
// the protocol continues it so that it exits within the grace, without
// the kill.
func TestStoppedMemberGetsTERM(t *testing.T) {
	g := startGroup(t, `sleep 1000 & echo $! > "$D/pid"; touch "$D/ready"; wait`)
	b, _ := os.ReadFile(filepath.Join(g.dir, "pid"))
	pid := 0
	for _, c := range strings.TrimSpace(string(b)) {
		pid = pid*10 + int(c-'0')
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r := g.stop(10 * time.Second)
	checkStopped(t, r)
	if r.Evidence.KillUsed {
		t.Errorf("kill used: the stopped member never acted on SIGTERM\nsteps: %+v", r.Steps)
	}
}

// TestFrozenLeaf: a leaf frozen at stop time is thawed so that SIGTERM
// acts within the grace; a TERM-ignoring frozen group is still killed,
// with cgroup.kill and with freeze+sigkill.
func TestFrozenLeaf(t *testing.T) {
	for _, tc := range []struct {
		name         string
		script       string
		noCgroupKill bool
		wantKill     bool
	}{
		// A handler must run to act on SIGTERM: frozen, it cannot (a
		// default-action SIGTERM kills even a frozen task). Ready once the
		// child runs sleep: until its exec, the forked shell still has the
		// TERM trap, and a SIGTERM caught then is lost with it at the
		// exec, leaving a sleep that only the kill ends.
		{"handles TERM", `trap "exit 0" TERM; sleep 1000 & until [ "$(cat /proc/$!/comm)" = sleep ]; do :; done; touch "$D/ready"; wait`, false, false},
		{"ignores TERM, cgroup.kill", ignoresTERM, false, true},
		{"ignores TERM, freeze+sigkill", ignoresTERM, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer oldkernel.Force(false, tc.noCgroupKill)()
			g := startGroup(t, tc.script)
			if err := g.leaf.Freeze(true); err != nil {
				t.Fatal(err)
			}
			if ok, err := g.leaf.WaitFrozen(5 * time.Second); !ok || err != nil {
				t.Fatalf("leaf not frozen: %v", err)
			}
			grace := 10 * time.Second
			if tc.wantKill {
				grace = 100 * time.Millisecond
			}
			r := g.stop(grace)
			checkStopped(t, r)
			if r.Evidence.KillUsed != tc.wantKill {
				t.Errorf("kill used = %t, want %t\nsteps: %+v", r.Evidence.KillUsed, tc.wantKill, r.Steps)
			}
			if s := step(r, "term"); s == nil || !strings.Contains(s.Observed, "thawed") {
				t.Errorf("term step = %+v, want it to say the leaf was thawed", s)
			}
		})
	}
}

// TestZombieMember: a member that is a zombie of a TERM-ignoring parent
// that never waits (and ignores SIGCHLD) does not hold the stop up.
func TestZombieMember(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(map[bool]string{false: "pidfd info", true: "proc"}[force], func(t *testing.T) {
			defer oldkernel.Force(force, false)()
			g := startGroup(t, `trap "" TERM CHLD; sh -c 'trap "" CHLD TERM; sleep 0 & touch "$D/ready"; exec sleep 1000'`)
			r := g.stop(100 * time.Millisecond)
			checkStopped(t, r)
		})
	}
}

// TestConfirmUnderOneDeadline: members that cannot be confirmed gone (here
// they leave the leaf on SIGTERM and live on) are waited for under one
// kill-wait deadline, not one kill wait each in turn.
func TestConfirmUnderOneDeadline(t *testing.T) {
	parent, err := cgroup.DefaultParent()
	if err != nil || os.Getuid() != 0 {
		t.Skip("needs root and a cgroup v2 parent")
	}
	escape, err := cgroup.Create(parent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		escape.Kill()
		escape.WaitEmpty(5 * time.Second)
		escape.Remove()
	})
	g := startGroup(t, `for i in 1 2 3; do sh -c 'trap "echo \$\$ > $E/cgroup.procs; exec sleep 1000" TERM; touch "$D/r$0"; while :; do sleep 0.01; done' $i & done; until [ -e "$D/r1" ] && [ -e "$D/r2" ] && [ -e "$D/r3" ]; do sleep 0.01; done; touch "$D/ready"; wait`, "E="+escape.Path)
	r := &Run{Leaf: g.leaf, Policy: Policy{Grace: 5 * time.Second, KillWait: time.Second}}
	r.Do()
	if n := len(r.Evidence.Unconfirmed); n != 3 {
		t.Fatalf("unconfirmed = %d, want the 3 members that left the leaf\nsteps: %+v", n, r.Steps)
	}
	if !r.Evidence.Empty || !r.Evidence.LeafRemoved {
		t.Errorf("evidence = %+v, want the leaf seen empty and removed", r.Evidence)
	}
	// One deadline: about one kill wait in all; serial waits take three.
	var before time.Time
	for _, s := range r.Steps {
		if s.Name == "reap" {
			if took := s.At.Sub(before); took >= 2*r.KillWait {
				t.Errorf("confirming 3 unconfirmed members took %s, want about one kill wait (%s)", took, r.KillWait)
			}
		}
		before = s.At
	}
}

// TestOpenAllKeepsOrder: openAll returns one result per pid in the
// list's order, on this goroutine or, from parallelOpen pids on, par's: a
// handle for a live process, an error for a pid that names none.
func TestOpenAllKeepsOrder(t *testing.T) {
	for _, n := range []int{3, parallelOpen + 1} {
		pids := make([]int, n)
		for i := range pids {
			pids[i] = os.Getpid()
		}
		pids[n/2] = 0 // no process: pidfd_open refuses it
		out := openAll(pids)
		if len(out) != n {
			t.Fatalf("openAll(%d pids) = %d results", n, len(out))
		}
		for i, o := range out {
			if i == n/2 {
				if o.err == nil || o.h != nil {
					t.Errorf("n=%d: result %d for pid 0 = %v, %v; want an error", n, i, o.h, o.err)
				}
				continue
			}
			if o.err != nil || o.h == nil || o.h.Token.PID != os.Getpid() {
				t.Errorf("n=%d: result %d = %v, %v; want a handle of pid %d", n, i, o.h, o.err, os.Getpid())
			}
			if o.h != nil {
				o.h.Close()
			}
		}
	}
}
