package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-run/tether/internal/hostinfo"
)

// TestDoctorFlags: doctor's flags as parsed, without probing the host.
func TestDoctorFlags(t *testing.T) {
	parent := filepath.Join(os.TempDir(), "tether") // absolute on every OS
	checkFlags(t, "doctor", ExitUsage, newDoctorCmdRun, []flagCase[doctorOptions]{
		{[]string{}, &doctorOptions{}, ""},
		{[]string{"--json", "--cgroup-parent", parent}, &doctorOptions{json: true, probe: hostinfo.Options{CgroupParent: parent, ParentSource: "--cgroup-parent"}}, ""},
		{[]string{"--cgroup-parent", "user.slice"}, nil, `--cgroup-parent "user.slice": must be an absolute path`},
		{[]string{"now"}, nil, "unknown command"},
	})
}
