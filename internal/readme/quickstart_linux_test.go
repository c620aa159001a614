package readme

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// quickStart returns the command lines of README's quick start: the
// lines of the first ```sh block after the "## Quick start" heading,
// without blank lines and comments.
func quickStart(readme string) []string {
	_, after, ok := strings.Cut(readme, "\n## Quick start\n")
	if !ok {
		return nil
	}
	_, block, ok := strings.Cut(after, "\n```sh\n")
	if !ok {
		return nil
	}
	block, _, _ = strings.Cut(block, "\n```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestQuickStart runs README's quick start as written, line by line, each
// in sh -c, with a tether built from this checkout first on PATH (as
// README's set-up command builds it), in a fresh directory and a state
// directory of its own. Every line must exit 0; afterwards no session may
// be live (leakcheck, in TestMain, fails the run if a process or cgroup
// is left). The quick start must show run, start, ls, logs and stop.
func TestQuickStart(t *testing.T) {
	lines := quickStart(readFile(t, filepath.Join(root, "README.md")))
	all := strings.Join(lines, "\n")
	for _, want := range []string{"tether run ", "tether start ", "tether ls", "tether logs ", "tether stop "} {
		if !strings.Contains(all, want) {
			t.Errorf("README's quick start has no %q line; it has:\n%s", want, all)
		}
	}
	if t.Failed() {
		return
	}
	needGo(t)

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "tether"), "./cmd/tether")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build tether: %v\n%s", err, out)
	}
	work, xdg := t.TempDir(), t.TempDir()
	env := append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_RUNTIME_DIR="+xdg, // the state dir: $XDG_RUNTIME_DIR/tether
		"TETHER_PROGRESS=0",
	)
	run := func(line string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
		defer cancel()
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir, cmd.Env = work, env
		cmd.WaitDelay = 5 * time.Second
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	// Whatever a failed line left running is stopped, so that the
	// failure is the line's, not a leak's.
	t.Cleanup(func() { run("tether stop --all --kill") })

	for _, line := range lines {
		out, err := run(line)
		t.Logf("$ %s\n%s", line, out)
		if err != nil {
			t.Fatalf("README's quick start: %q failed: %v\n%s", line, err, out)
		}
	}

	out, err := run("tether ls --json")
	if err != nil {
		t.Fatalf("tether ls --json: %v\n%s", err, out)
	}
	var ls struct {
		Sessions []struct{ Name, State string }
	}
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatalf("tether ls --json: %v\n%s", err, out)
	}
	if len(ls.Sessions) > 0 {
		t.Errorf("after the quick start, sessions still live: %+v (its commands must stop what they start)", ls.Sessions)
	}
}

// needGo skips t where no working go toolchain is on PATH: the host
// matrix's guests run the test binaries the host built and have none
// (.ci/vm/skips.txt). Host CI, which has one, runs the test.
func needGo(t *testing.T) {
	t.Helper()
	if err := exec.Command("go", "version").Run(); err != nil {
		t.Skipf("no working go toolchain (go version: %v): README's commands build tether", err)
	}
}

// setUpCommand returns README's first set-up command: the indented line
// after "Set up a fresh machine".
func setUpCommand(readme string) string {
	_, after, ok := strings.Cut(readme, "\nSet up a fresh machine")
	if !ok {
		return ""
	}
	for _, l := range strings.Split(after, "\n")[1:] {
		if strings.HasPrefix(l, "    ") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// TestSetUpCommand runs README's first command as written — it builds
// tether into bin/ and runs its main job on a command that leaves two
// daemons — in a directory that mirrors the checkout through symbolic
// links (so that bin/ is made there, not in the checkout), and checks
// what README says it shows: the run exits 0, the daemons are stopped,
// and the receipt on stdout confirms it.
func TestSetUpCommand(t *testing.T) {
	line := setUpCommand(readFile(t, filepath.Join(root, "README.md")))
	if !strings.Contains(line, "go build") || !strings.Contains(line, "run --receipt -") {
		t.Fatalf("README's set-up command %q: want a go build of tether and a run with --receipt -", line)
	}
	needGo(t)
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, e := range ents {
		if e.Name() == "bin" {
			continue
		}
		if err := os.Symlink(filepath.Join(abs, e.Name()), filepath.Join(work, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("README's set-up command failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	msg, js, ok := strings.Cut(out, "{")
	if !ok || !strings.Contains(msg, "left two daemons behind") {
		t.Fatalf("stdout %q: want the command's line, then the receipt", out)
	}
	var r struct {
		StopConfirmed   bool `json:"stop_confirmed"`
		StragglersTotal int  `json:"stragglers_total"`
		Exit            struct{ Code int }
	}
	if err := json.Unmarshal([]byte("{"+js), &r); err != nil {
		t.Fatalf("the receipt: %v\n%s", err, out)
	}
	if !r.StopConfirmed || r.StragglersTotal != 2 || r.Exit.Code != 0 {
		t.Errorf("receipt: stop_confirmed %v, stragglers_total %d, exit %d; want true, 2 (the two daemons), 0", r.StopConfirmed, r.StragglersTotal, r.Exit.Code)
	}
}
