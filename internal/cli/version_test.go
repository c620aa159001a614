package cli_test

import (
	"testing"

	"github.com/tether-run/tether/version"
)

// TestVersion (issue 11): --version prints one line, the build info of the
// binary that runs (this test binary, which records no commit: it must say
// so rather than print an empty revision).
func TestVersion(t *testing.T) {
	code, stdout, stderr := tether(t, "--version")
	want := version.Get().String() + "\n"
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("tether --version = exit %d, stdout %q, stderr %q; want 0, %q, nothing", code, stdout, stderr, want)
	}
}
