package watch

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/registry"
)

// The test binary is a watcher when an owner starts it (as contain's init
// makes every program that runs groups one), and the tests' owner when
// ownerEnv names the process it watches over.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(Env); ok {
		Serve()
		os.Exit(0)
	}
	if pid := os.Getenv(ownerEnv); pid != "" {
		ownerMain(pid)
		return
	}
	os.Exit(leakcheck.Main(m))
}

// ownerEnv names, to an owner started by a test, the pid of the process
// it tells its watcher of; ownerDirEnv the state dir. hangEnv makes the
// owner hang once it started its second watcher, before Spawn returns.
const ownerEnv, ownerDirEnv, hangEnv = "WATCH_TEST_OWNER", "WATCH_TEST_DIR", "WATCH_TEST_HANG"

// ownerMain adds the process as a group, says "added", and then on each
// line of its stdin: "done" calls Done. At stdin's end it waits to be
// killed.
func ownerMain(pid string) {
	n, _ := strconv.Atoi(pid)
	if os.Getenv(hangEnv) != "" {
		spawns := 0
		Spawn = func(cmd *exec.Cmd) (func(), error) {
			if spawns++; spawns > 1 {
				if err := cmd.Start(); err != nil {
					return nil, err
				}
				select {} // the test kills us here
			}
			return func() {}, cmd.Start()
		}
	}
	tok, err := identity.Of(n)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	rec := &registry.Record{Name: "run-watch-test", Kind: "run", Main: tok.String(), StopSignal: "TERM", Owner: "none"}
	id, err := Add(os.Getenv(ownerDirEnv), Group{Record: rec, GraceMS: 100})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	fmt.Println("added")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() == "done" {
			Done(id)
			fmt.Println("done")
		}
	}
	select {}
}

// fixture is a victim process, an owner that told a watcher of it, and
// the state dir.
type fixture struct {
	dir    string
	victim *exec.Cmd
	ended  chan struct{} // the victim exited
	owner  *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	// stale says the test killed a watcher: its socket is left, for the
	// next watcher to replace.
	stale bool
}

func start(t *testing.T, env ...string) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), ended: make(chan struct{})}
	f.victim = exec.Command("sleep", "1000")
	if err := f.victim.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { f.victim.Wait(); close(f.ended) }()
	t.Cleanup(func() {
		f.victim.Process.Kill()
		<-f.ended
	})
	f.owner = exec.Command(os.Args[0])
	f.owner.Env = append(append(os.Environ(), ownerEnv+"="+strconv.Itoa(f.victim.Process.Pid), ownerDirEnv+"="+f.dir), env...)
	f.in, _ = f.owner.StdinPipe()
	out, _ := f.owner.StdoutPipe()
	f.out = bufio.NewReader(out)
	if err := f.owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.owner.Process.Kill()
		f.owner.Wait()
		awaitGone(t, f.dir, f.stale)
	})
	f.expect(t, "added")
	return f
}

// expect reads the owner's next line.
func (f *fixture) expect(t *testing.T, want string) {
	t.Helper()
	line, err := f.out.ReadString('\n')
	if strings.TrimSpace(line) != want {
		t.Fatalf("owner said %q (%v), want %q", line, err, want)
	}
}

// killOwner kills the owner with SIGKILL.
func (f *fixture) killOwner(t *testing.T) {
	t.Helper()
	f.owner.Process.Signal(syscall.SIGKILL)
	f.owner.Wait()
}

// stopped reports whether the victim ended within d.
func (f *fixture) stopped(d time.Duration) bool {
	select {
	case <-f.ended:
		return true
	case <-time.After(d):
		return false
	}
}

// replaceWatcher kills dir's watcher and returns the pid of the one the
// owner starts in its place, which listens nowhere (its state dir is "").
func (f *fixture) replaceWatcher(t *testing.T) int {
	t.Helper()
	syscall.Kill(f.watcher(t), syscall.SIGKILL)
	f.stale = true
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		for pid := range leakcheck.Find(Env, "") {
			if ppid(pid) == f.owner.Process.Pid {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the owner started no watcher after its watcher died")
		}
	}
}

// watchers returns the watchers of dir.
func watchers(dir string) map[int]string { return leakcheck.Find(Env, dir) }

// watcher waits for the one watcher of f's dir to show and returns its
// pid. The owner's spawn returns once the watcher's exec began, and the
// kernel fills in its /proc/PID/environ later in that exec: under load,
// the watcher can be missing from watchers for a while after "added".
func (f *fixture) watcher(t *testing.T) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		ws := watchers(f.dir)
		if len(ws) > 1 {
			t.Fatalf("watchers of %s: %v, want one", f.dir, ws)
		}
		for pid := range ws {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no watcher of %s within 10 s", f.dir)
		}
	}
}

// awaitGone waits for dir's watcher to exit, as it must once it has no
// owner (the tests' linger is 0), and to have removed its socket unless
// it was killed (stale).
func awaitGone(t *testing.T, dir string, stale bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(watchers(dir)) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher of %s did not exit: %v", dir, watchers(dir))
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, sockName)); err == nil && !stale {
		t.Errorf("the watcher left %s", sockName)
	}
}

// TestOwnerDeath: a group whose owner is SIGKILLed is stopped by the
// watcher, and the watcher then exits.
func TestOwnerDeath(t *testing.T) {
	f := start(t)
	f.watcher(t)
	f.killOwner(t)
	if !f.stopped(5 * time.Second) {
		t.Fatal("the victim runs on 5 s after its owner's death")
	}
	awaitGone(t, f.dir, false)
}

// TestDone: a group its owner said was done is not stopped at the
// owner's death.
func TestDone(t *testing.T) {
	f := start(t)
	fmt.Fprintln(f.in, "done")
	f.expect(t, "done")
	f.killOwner(t)
	if f.stopped(300 * time.Millisecond) {
		t.Fatal("the watcher stopped a group its owner said was done")
	}
}

// TestWatcherReplaced: when the watcher dies, its owner starts another
// and tells it of its groups again, which then stops them at the owner's
// death.
func TestWatcherReplaced(t *testing.T) {
	f := start(t)
	f.replaceWatcher(t)
	f.killOwner(t)
	if !f.stopped(5 * time.Second) {
		t.Fatal("the victim runs on 5 s after its owner's death")
	}
}

// TestOwnerDiesAsWatcherStarts: an owner that dies the instant the
// watcher it started in place of a dead one runs — before it wrote
// anything after the start — has told it of its groups: they were queued
// in the connection before the watcher existed.
func TestOwnerDiesAsWatcherStarts(t *testing.T) {
	f := start(t, hangEnv+"=1")
	again := f.replaceWatcher(t)
	f.killOwner(t)
	defer awaitNoListener(t, again, "the new watcher did not exit once its owner was gone")
	if !f.stopped(5 * time.Second) {
		t.Fatal("the victim runs on 5 s after its owner's death")
	}
}

// TestNoListenerLeavesAtOnce: a watcher that does not listen (it lost
// the state dir to another watcher, or has none) can be reached by no new
// owner, so once its own owner is gone it exits at once, not after the
// linger (a minute here) a listening watcher waits for new owners.
func TestNoListenerLeavesAtOnce(t *testing.T) {
	f := start(t, LingerEnv+"=1m")
	again := f.replaceWatcher(t)
	f.killOwner(t)
	if !f.stopped(5 * time.Second) {
		t.Fatal("the victim runs on 5 s after its owner's death")
	}
	awaitNoListener(t, again, "the watcher without a listener still ran 5 s after its last owner left (its linger is 1m)")
}

// awaitNoListener waits up to 5 s for the watcher pid, one that listens
// nowhere, to exit; else it kills it and fails with why.
func awaitNoListener(t *testing.T, pid int, why string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := leakcheck.Find(Env, "")[pid]; !ok {
			return
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal(why)
		}
	}
}

// TestOtherVersion: a connection that speaks another version of the
// protocol is closed, and the groups it named are not stopped — they are
// not this build's to read.
func TestOtherVersion(t *testing.T) {
	f := start(t)
	// The watcher listens once it has read its first owner's groups.
	var c net.Conn
	var err error
	for deadline := time.Now().Add(5 * time.Second); c == nil; time.Sleep(10 * time.Millisecond) {
		if c, err = net.Dial("unix", filepath.Join(f.dir, sockName)); err != nil && time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	defer c.Close()
	tok, _ := identity.Of(f.victim.Process.Pid)
	fmt.Fprintf(c, `{"v":%d,"op":"add","id":1,"group":{"record":{"name":"x","kind":"run","main":%q},"grace_ms":0}}`+"\n", version+1, tok.String())
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read = %d, %v; want the watcher to close the connection", n, err)
	}
	if f.stopped(300 * time.Millisecond) {
		t.Fatal("the watcher stopped a group named in another protocol version")
	}
	fmt.Fprintln(f.in, "done")
	f.expect(t, "done")
}

// ppid returns pid's parent, or 0.
func ppid(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	n, _ := strconv.Atoi(string(f[1]))
	return n
}
