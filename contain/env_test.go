package contain

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/store"
)

// TestEnv: the command's environment is Env with the run id set once,
// an inherited one replaced (on Windows whatever its case), the
// fallback's marker when set, and SYSTEMROOT kept on Windows.
func TestEnv(t *testing.T) {
	inherited := RunIDEnv + "=inherited"
	if runtime.GOOS == "windows" {
		inherited = strings.ToLower(RunIDEnv) + "=inherited"
	}
	c := &Cmd{Env: []string{"A=1", inherited, "B=2"}, RunID: "new", marker: "m1"}
	env := c.env()
	want := []string{"A=1", "B=2", RunIDEnv + "=new", store.MarkerEnv + "=m1"}
	for _, kv := range want {
		if !slices.Contains(env, kv) {
			t.Errorf("env() = %q, want %q in it", env, kv)
		}
	}
	if slices.Contains(env, inherited) {
		t.Errorf("env() = %q keeps the inherited run id", env)
	}
	if runtime.GOOS == "windows" {
		if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(strings.ToUpper(kv), "SYSTEMROOT=") }) {
			t.Errorf("env() = %q, want SYSTEMROOT added", env)
		}
	} else if len(env) != len(want) {
		t.Errorf("env() = %q, want exactly %q", env, want)
	}
	c.marker = ""
	if slices.Contains(c.env(), store.MarkerEnv+"=m1") {
		t.Error("env() carries a marker the run has none of")
	}
}
