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
