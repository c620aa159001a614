package cli

import (
	"testing"
	"time"

	"github.com/tether-run/tether/internal/reap"
)

// TestReapFlags: reap's flags as parsed, without reaping anything.
func TestReapFlags(t *testing.T) {
	checkFlags(t, "reap", ExitUsage, newReapCmdRun, []flagCase[reapOptions]{
		{[]string{}, &reapOptions{reap: reap.Options{Grace: 2 * time.Second}}, ""},
		{[]string{"--grace", "0", "--dry-run", "--json"}, &reapOptions{reap: reap.Options{Grace: reap.NoGrace, DryRun: true}, asJSON: true}, ""},
		{[]string{"--orphan-leaves", "--prune", "168h", "--grace", "0.5"}, &reapOptions{reap: reap.Options{Grace: 500 * time.Millisecond, OrphanLeaves: true, Prune: 168 * time.Hour}}, ""},
		{[]string{"web"}, nil, "unknown command"},
		{[]string{"--grace", "soon"}, nil, "soon"},
	})
}
