package cli

import (
	"fmt"
	"os"

	"github.com/tether-run/tether/receipt"
)

// scratchPrefix begins the name of every scratch dir (--scratch).
const scratchPrefix = "tether-scratch-"

// scratchDir is a run's private scratch dir (--scratch): a fresh
// directory, 0700, under $TMPDIR (os.TempDir), which the command gets as
// its TMPDIR. Under $TMPDIR rather than the state dir: it holds what the
// command writes, which may be large, and the state dir is often on a
// small tmpfs ($XDG_RUNTIME_DIR).
type scratchDir struct{ path string }

// newScratch makes the scratch dir; nil when not asked for.
func newScratch(want bool) (*scratchDir, error) {
	if !want {
		return nil, nil
	}
	d, err := os.MkdirTemp("", scratchPrefix) // 0700
	if err != nil {
		return nil, fmt.Errorf("--scratch: %w", err)
	}
	return &scratchDir{path: d}, nil
}

// environ gives the command the scratch dir as its TMPDIR.
func (s *scratchDir) environ(env []string) []string {
	if s == nil {
		return env
	}
	return mergeEnv(env, []string{"TMPDIR=" + s.path})
}

// end removes the scratch dir of a run that succeeded — exit 0 and its
// stop confirmed, so nothing of the run can still write there — and keeps
// it otherwise (keep says why); r records which, and kept reports it.
func (s *scratchDir) end(r *receipt.Receipt, keep string) (kept bool) {
	if s == nil {
		return false
	}
	r.Scratch = &receipt.Scratch{Path: s.path, Kept: keep}
	if keep == "" {
		if err := os.RemoveAll(s.path); err != nil {
			r.Scratch.Kept = "cannot remove it: " + err.Error()
			return true
		}
		r.Scratch.Removed = true
		return false
	}
	return true
}

// scratchKeep says why a run's scratch dir is kept, "" when it goes.
func scratchKeep(r *receipt.Receipt, code int) string {
	switch {
	case !r.StopConfirmed:
		return "the stop was not confirmed"
	case code != 0:
		return fmt.Sprintf("the run exited %d", code)
	}
	return ""
}
