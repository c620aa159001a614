package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tether-run/tether/identity"
)

// signalWriter buffers what is written and closes seen once it holds
// want.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// followLogs starts `tether logs -f name` and returns its output and a
// channel closed once the output holds want.
func followLogs(t *testing.T, xdg, name, want string) (<-chan int, *signalWriter, *bytes.Buffer, <-chan struct{}) {
	t.Helper()
	cmd, _, stderr := tetherCmd(t, "logs", "-f", name)
	cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg)
	seen := make(chan struct{})
	out := &signalWriter{want: want, seen: seen}
	cmd.Stdout = out
	return startTether(t, cmd), out, stderr, seen
}

// TestLogsFollowRotation (issue 9, bug 3): tether logs -f follows the log
// by name: output written after a rotation is printed, nothing is lost or
// repeated, and it ends when the session does.
func TestLogsFollowRotation(t *testing.T) {
	xdg := stateEnv(t)
	goFile := filepath.Join(t.TempDir(), "go")
	// About 10.9 MB of numbered lines: the 8 MiB log rotates once while
	// logs -f follows it.
	const n = 1500000
	name := mustStart(t, xdg, nil, "--name", "rotating", "--owner", "none", "--",
		"sh", "-c", `echo ready; while [ ! -e "$1" ]; do sleep 0.01; done; seq 1 `+strconv.Itoa(n), "sh", goFile)
	done, out, stderr, ready := followLogs(t, xdg, name, "ready\n")
	select {
	case <-ready:
	case code := <-done:
		t.Fatalf("tether logs -f exited %d before the output began: %s", code, stderr)
	}
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 0 {
		t.Errorf("tether logs -f = exit %d when the session ended, want 0; stderr: %s", code, stderr)
	}
	if !exists(filepath.Join(xdg, "tether", "logs", name+".log.1")) {
		t.Errorf("the log did not rotate: the test did not test rotation")
	}
	var want strings.Builder
	want.WriteString("ready\n")
	for i := 1; i <= n; i++ {
		want.WriteString(strconv.Itoa(i))
		want.WriteByte('\n')
	}
	if got := out.String(); got != want.String() {
		i := 0
		for i < len(got) && i < len(want.String()) && got[i] == want.String()[i] {
			i++
		}
		t.Errorf("tether logs -f printed %d bytes, want %d; they differ from byte %d", len(got), want.Len(), i)
	}
	awaitSupervisorExit(t, xdg, name)
	assertNoSurvivors(t)
}

// awaitSupervisorExit waits for the supervisor of an ended session to
// exit: it records the end a moment before it exits (a second, under the
// race detector: GORACE atexit_sleep_ms).
func awaitSupervisorExit(t *testing.T, xdg, name string) {
	t.Helper()
	tok, err := identity.Parse(statusOf(t, xdg, name).Supervisor)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := identity.Open(tok); err == nil {
		h.WaitExit(runDeadline)
		h.Close()
	}
}

// TestLogsFollowUnsupervised (issue 9, bug 3): tether logs -f on a session
// whose supervisor is gone prints what was logged and ends with an error,
// instead of waiting forever for output nothing will write.
func TestLogsFollowUnsupervised(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	name := mustStart(t, xdg, nil, "--name", "orphaned", "--owner", "none", "--", "sh", "-c", "echo hello; exec sleep 1000")
	done, out, stderr, seen := followLogs(t, xdg, name, "hello\n")
	select {
	case <-seen:
	case code := <-done:
		t.Fatalf("tether logs -f exited %d before the output: %s", code, stderr)
	}
	killSupervisor(t, xdg, name)
	if code := <-done; code != 1 || !strings.Contains(stderr.String(), "unsupervised") {
		t.Errorf("tether logs -f after the supervisor was killed = exit %d, stderr %q; want 1 and unsupervised", code, stderr)
	}
	if got := out.String(); got != "hello\n" {
		t.Errorf("tether logs -f printed %q, want %q", got, "hello\n")
	}
}
