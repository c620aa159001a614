package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/registry"
)

func TestMain(m *testing.M) {
	// This test binary is its sessions' supervisor, as an embedding
	// program is (ExampleClient).
	MaybeSupervise()
	os.Exit(leakcheck.Main(m))
}

func TestGenerateName(t *testing.T) {
	for in, prefix := range map[string]string{"/usr/bin/playwright-cli": "playwright-cli-", "tmux": "tmux-", "./a b/c d": "c_d-", "...": "session-", strings.Repeat("x", 60): strings.Repeat("x", 40) + "-",
		// Issue 15: a generated name is within the policy whatever the
		// command's name: never a dot-name nor a flag.
		"./-x": "x-", "/opt/.hidden": "hidden-", "--": "session-", "_-._9a": "9a-", "ä-x": "x-"} {
		got := generateName(in)
		if !strings.HasPrefix(got, prefix) || len(got) != len(prefix)+8 || registry.CheckName(got) != nil {
			t.Errorf("generateName(%q) = %q, want %s<8 hex>", in, got, prefix)
		}
	}
}

func TestSessionEnvOverridesCallerValues(t *testing.T) {
	rt := t.TempDir()
	o := Options{Name: "web", Profile: "tmux", Env: []string{"PATH=/bin", "TMPDIR=/scratch", "TMUX_TMPDIR=/elsewhere", "TETHER_SESSION=forged", "TETHER_GROUP_MARKER=x"}}
	env, err := sessionEnv(o, rt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{"PATH": "/bin", "TMPDIR": filepath.Join(rt, "tmp"), "TMUX_TMPDIR": filepath.Join(rt, "sock"), "TETHER_SESSION": "web", "TETHER_SESSION_DIR": rt}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["TETHER_GROUP_MARKER"]; ok {
		t.Error("a caller's group marker leaked into the session")
	}
}

func TestSessionEnvRefusesLongSocketPaths(t *testing.T) {
	rt := filepath.Join(t.TempDir(), strings.Repeat("r", 90))
	os.MkdirAll(rt, 0o700)
	for _, profile := range []string{"tmux", "playwright"} {
		if _, err := sessionEnv(Options{Name: "x", Profile: profile}, rt); !errors.Is(err, ErrSocketPath) || !strings.Contains(err.Error(), "bytes") {
			t.Errorf("profile %s with a %d-byte runtime dir: %v, want ErrSocketPath with the length", profile, len(rt), err)
		}
	}
	if _, err := sessionEnv(Options{Name: "x"}, rt); err != nil {
		t.Errorf("no profile: %v, want no socket check", err)
	}
}
