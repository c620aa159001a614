package cli

import "testing"

// TestInspectFlags: inspect's flags and name as parsed, without reading
// any session.
func TestInspectFlags(t *testing.T) {
	checkFlags(t, "inspect", ExitUsage, newInspectCmdRun, []flagCase[inspectOptions]{
		{[]string{"web"}, &inspectOptions{name: "web"}, ""},
		{[]string{"--run", "3f2a9c", "web"}, &inspectOptions{name: "web", run: "3f2a9c"}, ""},
		{[]string{}, nil, "one session NAME"},
		{[]string{"-web"}, nil, "unknown shorthand flag"},
	})
}
