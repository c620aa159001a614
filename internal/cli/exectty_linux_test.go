package cli_test

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// screen collects what a pty's master reads, for a test to wait on.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
	at  int // where the next wait starts looking
}

func (s *screen) read(f *os.File) {
	b := make([]byte, 4096)
	for {
		n, err := f.Read(b)
		s.mu.Lock()
		s.buf.Write(b[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// wait waits for want to appear after what earlier waits consumed.
func (s *screen) wait(t *testing.T, want string) {
	t.Helper()
	for t0 := time.Now(); time.Since(t0) < 15*time.Second; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		seen := s.buf.String()
		s.mu.Unlock()
		if i := strings.Index(seen[s.at:], want); i >= 0 {
			s.at += i + len(want)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t.Fatalf("the terminal never showed %q; it shows:\n%q", want, s.buf.String()[s.at:])
}

// interactiveShell returns the pid of t's "sh -i", failing t if there is
// not one.
func interactiveShell(t *testing.T) int {
	t.Helper()
	for pid, argv := range marked(marker(t)) {
		if argv == "sh -i" {
			return pid
		}
	}
	t.Fatal("no sh -i of this test runs")
	return 0
}

// awaitWinsize waits until the terminal of t's "sh -i" (its stdin) has
// rows and cols.
func awaitWinsize(t *testing.T, rows, cols uint16) {
	t.Helper()
	sh := interactiveShell(t)
	f, err := os.OpenFile("/proc/"+strconv.Itoa(sh)+"/fd/0", os.O_RDONLY|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ws *unix.Winsize
	for t0 := time.Now(); time.Since(t0) < 15*time.Second; time.Sleep(10 * time.Millisecond) {
		if ws, err = unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Row == rows && ws.Col == cols {
			return
		}
	}
	t.Fatalf("the shell's terminal is %+v (%v), want %d rows and %d columns", ws, err, rows, cols)
}

// awaitRunning waits until n of t's processes run argv.
func awaitRunning(t *testing.T, argv string, n int) {
	t.Helper()
	count := func() int {
		c := 0
		for _, a := range marked(marker(t)) {
			if a == argv {
				c++
			}
		}
		return c
	}
	for t0 := time.Now(); time.Since(t0) < 15*time.Second; time.Sleep(10 * time.Millisecond) {
		if count() >= n {
			return
		}
	}
	t.Fatalf("%d processes of this test run %q, want %d", count(), argv, n)
}

// TestExecTTY runs an interactive shell in a session through tether exec
// -t, from a terminal of the test's own (a pty pair, tether exec's
// controlling terminal), as a person at a terminal does: the shell shows
// its prompt (-e sets it), has a controlling terminal, sees the window's
// size and its change, gets ^C as a signal to its foreground job, runs
// in -w's directory, and its exit status is tether exec's. The test's
// terminal is out of raw mode afterwards, and nothing is left.
func TestExecTTY(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	mustStart(t, xdg, nil, "--name", "tty", "--", "sleep", "1000")

	tm, ts, err := pty.Open()
	if err != nil {
		t.Skipf("no pty on this host: %v", err)
	}
	defer tm.Close()
	pty.Setsize(tm, &pty.Winsize{Rows: 24, Cols: 80})
	before, err := unix.IoctlGetTermios(int(ts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd, _, _ := tetherCmd(t, "exec", "-it", "-e", "PS1=<ready> ", "-w", dir, "tty", "--", "sh", "-i")
	cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR", "PS1"), "XDG_RUNTIME_DIR="+xdg)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ts, ts, ts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := startCmd(cmd); err != nil {
		t.Fatal(err)
	}
	var scr screen
	go scr.read(tm)

	scr.wait(t, "<ready> ")
	tm.WriteString("pwd; exec 3</dev/tty && echo ctty-$((6*7)); stty size\r")
	scr.wait(t, dir)
	scr.wait(t, "ctty-42")
	scr.wait(t, "24 80")
	scr.wait(t, "<ready> ")

	// A resize of the test's window reaches the shell's terminal. The
	// SIGWINCH that carries it is asynchronous, and stty is run once the
	// size shows there: after a fixed 100 ms, a loaded host could run it
	// before tether exec had passed the size on.
	pty.Setsize(tm, &pty.Winsize{Rows: 50, Cols: 132})
	awaitWinsize(t, 50, 132)
	tm.WriteString("stty size\r")
	scr.wait(t, "50 132")
	scr.wait(t, "<ready> ")

	// ^C, typed, interrupts the foreground job and not the shell. It is
	// typed once sleep runs (the session's main and the shell's): after a
	// fixed 300 ms, a ^C that came while the shell's child was between
	// its fork and its exec could be caught by the shell's handler it
	// still had, and lost.
	tm.WriteString("sleep 1000\r")
	awaitRunning(t, "sleep 1000", 2)
	tm.Write([]byte{3})
	scr.wait(t, "<ready> ")
	tm.WriteString("echo alive-$((2*21))\r")
	scr.wait(t, "alive-42")
	scr.wait(t, "<ready> ")

	tm.WriteString("exit 3\r")
	if code := wait(t, cmd); code != 3 {
		t.Errorf("tether exec -t ... sh -i after 'exit 3' = %d, want 3", code)
	}
	after, err := unix.IoctlGetTermios(int(ts.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag {
		t.Errorf("the caller's terminal is not restored: lflag %#x iflag %#x oflag %#x, was %#x %#x %#x",
			after.Lflag, after.Iflag, after.Oflag, before.Lflag, before.Iflag, before.Oflag)
	}
	ts.Close()
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", "tty"); code != 0 {
		t.Fatalf("tether stop tty = %d: %s", code, stderr)
	}
	assertNoSurvivors(t)
}
