package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandEnv: -e and --env-file reach the command of run and of
// start; a bad line is refused before anything runs, naming file:line.
func TestCommandEnv(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "app.env")
	os.WriteFile(envFile, []byte("# settings\nexport GREETING=\"hello world\"\nWHO=file\n"), 0o600)
	script := `printf '%s|%s|%s' "$GREETING" "$WHO" "$TETHER_T_EXTRA" > "$1"`

	t.Run("run", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := tether(t, append([]string{"run", "-q", "--env-file", envFile, "-e", "WHO=flag", "--env", "TETHER_T_EXTRA=x=y", "--"}, sh(script, out)...)...)
		if b, _ := os.ReadFile(out); code != 0 || string(b) != "hello world|flag|x=y" {
			t.Errorf("tether run -e/--env-file: exit %d, command saw %q, want 0 and %q; stderr: %s", code, b, "hello world|flag|x=y", stderr)
		}
	})
	t.Run("start", func(t *testing.T) {
		xdg := stateEnv(t)
		out := filepath.Join(t.TempDir(), "out")
		name := mustStart(t, xdg, nil, append([]string{"--owner", "none", "--env-file", envFile, "-e", "TETHER_T_EXTRA=s", "--"}, sh(script, out)...)...)
		if code, _, stderr := tetherIn(t, xdg, nil, "wait", name); code != 0 {
			t.Fatalf("tether wait %s = %d: %s", name, code, stderr)
		}
		if b, _ := os.ReadFile(out); string(b) != "hello world|file|s" {
			t.Errorf("tether start -e/--env-file: command saw %q, want %q", b, "hello world|file|s")
		}
	})
	t.Run("bad", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.env")
		os.WriteFile(bad, []byte("A=1\n\nnot a line\n"), 0o600)
		started := filepath.Join(t.TempDir(), "started")
		for _, tc := range []struct {
			cmd  string
			code int
		}{{"run", 125}, {"start", 2}} {
			code, _, stderr := tether(t, tc.cmd, "--env-file", bad, "--", "touch", started)
			if want := bad + ":3: want KEY=VALUE"; code != tc.code || !strings.Contains(stderr, want) {
				t.Errorf("tether %s --env-file (bad line 3) = %d, %q; want %d and %q", tc.cmd, code, stderr, tc.code, want)
			}
		}
		if _, err := os.Stat(started); err == nil {
			t.Error("the command ran")
		}
	})
}
