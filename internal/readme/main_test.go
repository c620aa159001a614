package readme

import (
	"os"
	"testing"

	"github.com/tether-run/tether/internal/leakcheck"
)

// TestMain fails the run if the quick start leaves a process or a cgroup
// behind: its session commands must stop what they start.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }
