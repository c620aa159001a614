package cli

import (
	"testing"
	"time"
)

// TestPruneFlags: prune's flags as parsed, without removing anything.
func TestPruneFlags(t *testing.T) {
	checkFlags(t, "prune", ExitUsage, newPruneCmdRun, []flagCase[pruneOptions]{
		{[]string{}, &pruneOptions{}, ""},
		{[]string{"--older", "24h", "--dry-run", "--json"}, &pruneOptions{older: 24 * time.Hour, olderSet: true, dryRun: true, asJSON: true}, ""},
		{[]string{"--older", "0"}, &pruneOptions{olderSet: true}, ""},
		{[]string{"web"}, nil, "unknown command"},
		{[]string{"--older", "-"}, nil, "--older"},
	})
}
