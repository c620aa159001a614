package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-run/tether/session"

	"github.com/tether-run/tether/internal/cli"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/store"
)

// asTetherEnv makes the test binary behave as the tether binary: the
// standard library's helper-process pattern, so that the tests run the real
// CLI in a real process without building a second binary.
const asTetherEnv = "TETHER_TEST_AS_TETHER"

// caseEnv carries a per-test marker into every process a test starts, so
// that survivors can be told apart from those of other tests.
const caseEnv = "TETHER_CASE"

// runDeadline bounds one tether invocation. It is a hang guard, never an
// assertion about how long a run takes.
const runDeadline = 30 * time.Second

func TestMain(m *testing.M) {
	// A supervisor gets its session's environment, which may name a
	// helper for the session's command: it supervises all the same.
	session.MaybeSupervise()
	if h := os.Getenv(helperEnv); h != "" && os.Getenv(asTetherEnv) != "1" {
		os.Exit(runHelper(h, os.Args[1:]))
	}
	if os.Getenv(asTetherEnv) == "1" {
		os.Exit(cli.Tether()) // what cmd/tether's main does
	}
	// The tests' own state directory: runs write records, and a record
	// left behind is a run that was not confirmed stopped.
	xdg, err := os.MkdirTemp("", "tether-cli-test-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_RUNTIME_DIR", xdg)
	// Windows has its own variable (Wine sets LOCALAPPDATA itself).
	os.Setenv("TETHER_STATE_DIR", filepath.Join(xdg, "tether"))
	racesOK := raceLogs()
	code := leakcheck.Main(m)
	if !racesOK() {
		code = 1
	}
	if recs, _ := filepath.Glob(filepath.Join(xdg, "tether", "records", "run-*.json")); len(recs) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d run records left behind (runs not confirmed stopped): %v\n", len(recs), recs)
		code = 1
	}
	store.RemoveAll(xdg) // os.RemoveAll fails under Wine 8
	os.Exit(code)
}

// markers holds the marker of each test that started tether.
var markers sync.Map // *testing.T → string

// marker returns t's marker value for caseEnv, creating it on first use.
// Its cleanup kills whatever still carries the marker, so that a failing
// test does not leak into the next one (the failure itself is reported by
// the test's own survivor check).
func marker(t *testing.T) string {
	t.Helper()
	if m, ok := markers.Load(t); ok {
		return m.(string)
	}
	var b [8]byte
	rand.Read(b[:])
	m := hex.EncodeToString(b[:])
	markers.Store(t, m)
	t.Cleanup(func() {
		markers.Delete(t)
		killMarked(m)
	})
	return m
}

// tetherCmd returns an unstarted command that runs this test binary as
// tether with args. Its environment is the test's, plus asTetherEnv and
// the test's marker; callers may change Env, Dir and SysProcAttr before
// running it with wait.
func tetherCmd(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	return tetherCmdFor(t, runDeadline, args...)
}

// tetherCmdFor is tetherCmd with the hang guard d instead of runDeadline,
// for an invocation that may wait its turn (a pool's member).
func tetherCmdFor(t *testing.T, d time.Duration, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable() = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(withoutEnv(os.Environ(), asTetherEnv, caseEnv), asTetherEnv+"=1", caseEnv+"="+marker(t))
	// A member that outlives tether holds stdout; do not let it hang Wait.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t.Cleanup(func() {
		if cmd.Process != nil && cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &stdout, &stderr
}

// forkMu is held for reading around every start of a child, and for
// writing while a file that will be executed is open for writing: a child
// forked meanwhile would inherit the write fd and make exec of that file
// fail with ETXTBSY (golang.org/issue/22315).
var forkMu sync.RWMutex

// startCmd starts cmd under forkMu.
func startCmd(cmd *exec.Cmd) error {
	forkMu.RLock()
	defer forkMu.RUnlock()
	return cmd.Start()
}

// wait runs a command from tetherCmd, or waits for it if it was started,
// and returns its exit code.
func wait(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	var err error
	if cmd.Process == nil {
		err = startCmd(cmd)
	}
	if err == nil {
		err = cmd.Wait()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode()
	}
	t.Fatalf("tether %s: %v (state %v)", strings.Join(cmd.Args[1:], " "), err, cmd.ProcessState)
	return -1
}

// tether runs the test binary as tether with args and returns its exit
// code, stdout and stderr.
func tether(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd, out, errb := tetherCmd(t, args...)
	code = wait(t, cmd)
	return code, out.String(), errb.String()
}

// withoutEnv returns env without the variables named in names.
func withoutEnv(env []string, names ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func TestRunHelp(t *testing.T) {
	code, stdout, stderr := tether(t, "run", "--help")
	if code != 0 {
		t.Fatalf("tether run --help = exit %d, want 0; stderr: %s", code, stderr)
	}
	for _, flag := range []string{"--timeout", "--grace", "--kill-wait", "--receipt", "--require"} {
		if !strings.Contains(stdout, flag) {
			t.Errorf("tether run --help = stdout without %q, want it mentioned; stdout:\n%s", flag, stdout)
		}
	}
}
