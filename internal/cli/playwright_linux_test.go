package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/registry"
)

// playwrightCLI finds playwright-cli: $PLAYWRIGHT_CLI, the copy .ci/run
// installs under .cache/npm, or PATH. Chromium must be at /usr/bin/chromium.
func playwrightCLI(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		t.Skipf("Chromium not installed (apt-get install chromium; .ci/run does): %v", err)
	}
	for _, p := range []string{os.Getenv("PLAYWRIGHT_CLI"), "../../.cache/npm/node_modules/.bin/playwright-cli"} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				return abs
			}
		}
	}
	p, err := exec.LookPath("playwright-cli")
	if err != nil {
		t.Skipf("playwright-cli not installed (npm install --prefix .cache/npm @playwright/cli; .ci/run does): %v", err)
	}
	return p
}

const playwrightConfig = `{"browser":{"launchOptions":{"executablePath":"/usr/bin/chromium","args":["--no-sandbox","--disable-gpu","--disable-background-networking"]}}}`

// TestSessionPlaywright opens a real Chromium through playwright-cli in a
// session with the playwright profile, deletes the caller's scratch
// TMPDIR, finds the browser again through the session's environment, and
// stops it all: no node, chromium or crashpad process survives.
func TestSessionPlaywright(t *testing.T) {
	pw := playwrightCLI(t)
	xdg := stateEnv(t)
	base, err := os.MkdirTemp("", "pw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	os.MkdirAll(filepath.Join(ws, ".playwright"), 0o700)
	os.WriteFile(filepath.Join(ws, ".playwright", "cli.config.json"), []byte(playwrightConfig), 0o600)
	scratch := filepath.Join(base, "scratch")
	os.Mkdir(scratch, 0o700)
	pwDir, _ := filepath.Abs(filepath.Dir(pw))
	// playwright-cli on the session's PATH: --profile playwright's stop runs
	// playwright-cli close-all.
	env := []string{"TMPDIR=" + scratch, "HOME=" + base, "XDG_CACHE_HOME=" + filepath.Join(base, "cache"), "NO_UPDATE_NOTIFIER=1", "PW=" + pw,
		"PATH=" + pwDir + ":" + os.Getenv("PATH")}

	// As the docs start it: the profile's default, --until empty, keeps
	// the session after playwright-cli open returns.
	cmd, _, stderr := tetherCmd(t, "start", "--name", "pw", "--profile", "playwright", "--owner", "none",
		"--", "sh", "-c", `"$PW" open about:blank`)
	cmd.Env = append(append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR", "TMPDIR", "HOME"), "XDG_RUNTIME_DIR="+xdg), env...)
	cmd.Dir = ws
	if code := wait(t, cmd); code != 0 {
		t.Fatalf("tether start = %d: %s", code, stderr)
	}
	s := statusOf(t, xdg, "pw")
	list := func() string {
		c := exec.Command(pw, "list")
		c.Dir = ws
		c.Env = append(withoutEnv(os.Environ(), "TMPDIR", "HOME"), "TMPDIR=/nonexistent", "HOME="+base, "NO_UPDATE_NOTIFIER=1",
			"PWTEST_SOCKETS_DIR="+filepath.Join(s.RuntimeDir, "sock"), "PWTEST_DAEMON_SESSION_DIR="+filepath.Join(s.RuntimeDir, "pw"))
		out, _ := c.CombinedOutput()
		return string(out)
	}
	// The open command returns once the browser is up; wait for it.
	var got string
	for t0 := time.Now(); time.Since(t0) < 90*time.Second; time.Sleep(250 * time.Millisecond) {
		if got = list(); strings.Contains(got, "status: open") {
			break
		}
		if st := statusOf(t, xdg, "pw"); st.State != registry.StateRunning {
			_, logs, _ := tetherIn(t, xdg, nil, "logs", "pw")
			t.Fatalf("session ended (%s, %s) before the browser opened; logs:\n%s", st.State, st.StopReason, logs)
		}
	}
	if !strings.Contains(got, "status: open") {
		_, logs, _ := tetherIn(t, xdg, nil, "logs", "pw")
		t.Fatalf("playwright-cli list = %q, want an open browser; logs:\n%s", got, logs)
	}
	os.RemoveAll(scratch)
	time.Sleep(2500 * time.Millisecond) // the daemon checks its socket every second
	// Reached through tether exec, with no hand-built environment: the
	// caller's TMPDIR is gone and it knows nothing of PWTEST_*.
	ex, exOut, exErr := tetherCmd(t, "exec", "pw", "--", pw, "list")
	ex.Env = append(withoutEnv(ex.Env, "XDG_RUNTIME_DIR", "TMPDIR", "HOME"), "XDG_RUNTIME_DIR="+xdg, "TMPDIR="+scratch, "HOME="+base, "NO_UPDATE_NOTIFIER=1")
	ex.Dir = ws
	if code := wait(t, ex); code != 0 || !strings.Contains(exOut.String(), "status: open") {
		t.Errorf("after deleting the caller's TMPDIR, tether exec pw -- playwright-cli list = %d, %q (%s), want the browser still open", code, exOut, exErr)
	}
	s = statusOf(t, xdg, "pw")
	if s.Procs < 3 {
		t.Errorf("procs = %d, want node, chromium and its helpers", s.Procs)
	}

	code, _, stderr2 := tetherIn(t, xdg, nil, "stop", "pw")
	if code != 0 {
		t.Fatalf("tether stop = %d: %s", code, stderr2)
	}
	s = statusOf(t, xdg, "pw")
	r, _ := readReceipt(t, s.Receipt)
	// The profile's stop: playwright-cli close-all, first, and it worked;
	// the stop protocol follows for whatever it left.
	if !r.StopConfirmed || len(r.Stop.Steps) < 2 || r.Stop.Steps[0].StopExec == nil ||
		strings.Join(r.Stop.Steps[0].StopExec.Argv, " ") != "playwright-cli close-all" || r.Stop.Steps[0].StopExec.ExitCode != 0 {
		t.Errorf("receipt: confirmed %t, steps %+v", r.StopConfirmed, r.Stop.Steps)
	} else {
		t.Logf("stop: %s; then %s: %s", r.Stop.Steps[0].Observed, r.Stop.Steps[1].Name, r.Stop.Steps[1].Observed)
	}
	for _, p := range []string{"node", "chromium", "chrome_crashpad"} {
		for pid, argv := range marked(marker(t)) {
			if strings.Contains(argv, p) {
				t.Errorf("%s survived: %d %s", p, pid, argv)
			}
		}
	}
	assertNoSurvivors(t)
}
