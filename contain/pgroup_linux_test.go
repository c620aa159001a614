package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/stop"
)

// The pgroup mechanism is macOS's, and its stop protocol is tested here
// on Linux against real process trees, with /proc as the process table:
// the same decisions and signals, another table.

// procTable is /proc as the pgroup protocol's table.
type procTable struct{}

func (procTable) table() ([]tableEntry, error) {
	var out []tableEntry
	for _, st := range readAllStatsProc() {
		out = append(out, tableEntry{PID: st.PID, PPID: st.PPID, PGID: st.PGID, Start: st.StartTime, Zombie: st.State == 'Z'})
	}
	return out, nil
}

func (procTable) token(e tableEntry) identity.Token {
	boot, _ := identity.BootID()
	return identity.Token{OS: "linux", BootID: boot, PID: e.PID, StartTime: e.Start}
}

// pgroupTree starts script under sh as the leader of a session of its
// own, as the pgroup mechanism starts a command, and waits for it to
// write dir/ready. Whatever is left in its session at the end is killed.
func pgroupTree(t *testing.T, script string) (*exec.Cmd, identity.Token, string) {
	t.Helper()
	dir := t.TempDir()
	c := exec.Command("sh", "-c", script)
	c.Dir = dir
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { c.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		killMarked(dir)
		<-done
	})
	tok, err := identity.Of(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tree never said it was ready")
		}
	}
	return c, tok, dir
}

// sleepersIn lists the live processes that wrote their pid to dir/pid.*.
func sleepersIn(dir string) []int {
	var out []int
	files, _ := filepath.Glob(filepath.Join(dir, "pid.*"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			continue
		}
		if st, err := identity.ReadStat(pid); err == nil && st.State != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// killMarked kills every process working in dir: the tree's, whatever
// session it left for.
func killMarked(dir string) {
	for _, st := range readAllStatsProc() {
		if cwd, err := os.Readlink("/proc/" + strconv.Itoa(st.PID) + "/cwd"); err == nil && cwd == dir {
			syscall.Kill(st.PID, syscall.SIGKILL)
		}
	}
}

// protocolFor is the pgroup protocol for g, whose main process's exit
// is collected by reaped closing (nil: collected already).
func protocolFor(g *pgroupState, reaped <-chan struct{}) *pgroupProtocol {
	return &pgroupProtocol{g: g, awaitMain: func(deadline time.Time) bool {
		select {
		case <-reaped:
			return true
		case <-time.After(time.Until(deadline)):
			return false
		}
	}}
}

// policyOf is a stop policy with grace (stop.NoGrace: none).
func policyOf(grace time.Duration) stop.Policy {
	return stop.Policy{Grace: grace, KillWait: 5 * time.Second}
}

// treeScript is a TERM-ignoring main with a child, a setsid'd child and a
// double-forked grandchild (left to init, in the main's process group);
// each sleeper records its pid.
const treeScript = `trap "" TERM
sh -c 'echo $$ > pid.child; exec sleep 1000' &
setsid sh -c 'echo $$ > pid.setsid; exec sleep 1000' &
sh -c "sh -c 'echo \$\$ > pid.orphan; exec sleep 1000' &" 
while [ $(ls pid.* 2>/dev/null | wc -l) -lt 3 ]; do sleep 0.01; done
: > ready
wait`

// TestPgroupStopsTree: every member — a child, a setsid'd child, a
// double-forked orphan in the main's group, and the TERM-ignoring main —
// is found, stopped (the kill phase after the grace), and confirmed gone
// by its token.
func TestPgroupStopsTree(t *testing.T) {
	c, tok, dir := pgroupTree(t, treeScript)
	if n := len(sleepersIn(dir)); n != 3 {
		t.Fatalf("%d marked sleepers alive, want 3", n)
	}
	g := newPgroupState(procTable{}, tok, os.Getpid())
	reaped := make(chan struct{})
	go func() { c.Process.Wait(); close(reaped) }()
	p := protocolFor(g, reaped)
	p.run(policyOf(200 * time.Millisecond))
	if ev := p.Evidence; !ev.Empty || !ev.KillUsed || len(ev.Unconfirmed) != 0 || ev.MembersSeen < 4 || ev.ConfirmedGone != ev.MembersSeen {
		t.Errorf("evidence %+v; want empty after the kill, >= 4 members seen, all confirmed gone; steps %+v", ev, p.Steps)
	}
	if left := sleepersIn(dir); len(left) != 0 {
		t.Errorf("sleepers %v survived the stop", left)
	}
}

// TestPgroupKnownOrphan: a member that a walk saw is stopped even after
// it left the main's session and its parent exited; one started that way
// between walks, never seen, escapes — the caveat the receipt states.
func TestPgroupKnownOrphan(t *testing.T) {
	// A setsid'd middle process starts the "seen" sleeper and waits for
	// "go": the test walks while the chain is intact. On "go" the middle
	// exits (the seen sleeper is orphaned), and the main double-forks a
	// setsid'd "escaped" sleeper that no walk sees before it is orphaned.
	script := `setsid sh -c 'sh -c "echo \$\$ > pid.seen; exec sleep 1000" & while [ ! -e go ]; do sleep 0.01; done' &
while [ ! -e pid.seen ]; do sleep 0.01; done
: > ready
while [ ! -e go ]; do sleep 0.01; done
sh -c "setsid sh -c 'echo \$\$ > pid.escaped; exec sleep 1000' &"
sleep 1000`
	c, tok, dir := pgroupTree(t, script)
	g := newPgroupState(procTable{}, tok, os.Getpid())
	if _, err := g.walk(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		_, err := os.Stat(filepath.Join(dir, "pid.escaped"))
		if st, serr := readSeen(dir); err == nil && serr == nil && st.PPID != 0 && len(sleepersIn(dir)) == 2 && orphaned(st) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alive %v; want the seen sleeper orphaned and the escapee", sleepersIn(dir))
		}
	}
	reaped := make(chan struct{})
	go func() { c.Process.Wait(); close(reaped) }()
	p := protocolFor(g, reaped)
	p.run(policyOf(stop.NoGrace))
	left := sleepersIn(dir)
	b, _ := os.ReadFile(filepath.Join(dir, "pid.escaped"))
	escaped, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if len(left) != 1 || left[0] != escaped {
		t.Errorf("left alive %v; want only the escapee %d (the seen orphan stopped)", left, escaped)
	}
	if len(p.Evidence.Unconfirmed) != 0 || !p.Evidence.Empty {
		t.Errorf("evidence %+v; the escapee is not a member, so the group is empty", p.Evidence)
	}
}

// readSeen is the stat of the "seen" sleeper.
func readSeen(dir string) (identity.Stat, error) {
	b, err := os.ReadFile(filepath.Join(dir, "pid.seen"))
	if err != nil {
		return identity.Stat{}, err
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return identity.ReadStat(pid)
}

// orphaned reports whether st's parent is no longer the setsid'd middle
// process: it was reparented (to init, or a subreaper).
func orphaned(st identity.Stat) bool {
	p, err := identity.ReadStat(st.PPID)
	return err == nil && p.SID != st.SID
}
