package cli

import "testing"

// TestMCPFlags: mcp takes no flags and no arguments; none starts the
// server.
func TestMCPFlags(t *testing.T) {
	checkFlags(t, "mcp", ExitUsage, newMCPCmdRun, []flagCase[mcpOptions]{
		{[]string{}, &mcpOptions{}, ""},
		{[]string{"serve"}, nil, "unknown command"},
		{[]string{"--json"}, nil, "unknown flag: --json"},
	})
}
