package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-run/tether/internal/testuser"
)

// TestExecFlags: exec's flags, name and command as parsed, --env-file
// read, without running anything; its usage errors exit 125.
func TestExecFlags(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(testuser.TempDir(t), "ci.env")
	if err := os.WriteFile(envFile, []byte("# comment\nexport A='1'\nB=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(filepath.Dir(envFile), "missing.env")
	checkFlags(t, "exec", ExitTether, newExecCmdRun, []flagCase[execOptions]{
		{[]string{"web", "--", "make", "test"}, &execOptions{name: "web", argv: []string{"make", "test"}, dir: cwd}, ""},
		{[]string{"web", "make", "-k"}, &execOptions{name: "web", argv: []string{"make", "-k"}, dir: cwd}, ""},
		{[]string{"-it", "-w", "sub", "-e", "A=1", "web", "bash"}, &execOptions{name: "web", argv: []string{"bash"}, tty: true, interactive: true, set: []string{"A=1"}, dir: filepath.Join(cwd, "sub")}, ""},
		{[]string{"--env-file", envFile, "-e", "B=2", "web", "sh"}, &execOptions{name: "web", argv: []string{"sh"}, set: []string{"A=1", "B=x", "B=2"}, dir: cwd}, ""},
		{[]string{"web"}, nil, "usage: tether exec NAME"},
		{[]string{"web", "--"}, nil, "usage: tether exec NAME"},
		{[]string{"Bad/name", "sh"}, nil, "Bad/name"},
		{[]string{"-e", "1A=x", "web", "sh"}, nil, `--env "1A=x"`},
		{[]string{"-e", "TETHER_SESSION=x", "web", "sh"}, nil, "tether sets TETHER_SESSION"},
		{[]string{"--env-file", missing, "web", "sh"}, nil, "--env-file"},
		{[]string{"--tty=maybe", "web", "sh"}, nil, "tty"},
	})
}
