package contain

import (
	"os"
	"runtime"
	"strings"

	"github.com/tether-run/tether/internal/store"
)

// env is the command's environment: Env (nil: ours) with the run id set,
// replacing an inherited one, and what the system adds: the fallback's
// group marker on Linux when it is in force, SYSTEMROOT on Windows where
// Env lacks it (many programs fail without it; os/exec adds it too).
func (c *Cmd) env() []string {
	base := c.Env
	if base == nil {
		base = os.Environ()
	}
	env := make([]string, 0, len(base)+2)
	hasRoot := false
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case envName(name, RunIDEnv):
			continue
		case envName(name, "SYSTEMROOT"):
			hasRoot = true
		}
		env = append(env, kv)
	}
	env = append(env, RunIDEnv+"="+c.RunID)
	if c.marker != "" {
		env = append(env, store.MarkerEnv+"="+c.marker)
	}
	if v, ok := os.LookupEnv("SYSTEMROOT"); ok && !hasRoot && runtime.GOOS == "windows" {
		env = append(env, "SYSTEMROOT="+v)
	}
	return env
}

// envName reports whether an environment entry's name is want: Windows
// names are case-insensitive.
func envName(name, want string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(name, want)
	}
	return name == want
}
