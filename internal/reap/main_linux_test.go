package reap_test

import (
	"os"
	"testing"

	"github.com/tether-run/tether/internal/leakcheck"
)

// TestMain fails the test binary when a test leaves a process or a
// cgroup leaf behind, and removes the tether binary the fault tests built.
func TestMain(m *testing.M) {
	code := leakcheck.Main(m)
	if faultBinDir != "" {
		os.RemoveAll(faultBinDir)
	}
	os.Exit(code)
}
