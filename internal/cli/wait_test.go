package cli

import "testing"

// TestWaitFlags: wait's flags and name as parsed, without waiting.
func TestWaitFlags(t *testing.T) {
	checkFlags(t, "wait", ExitUsage, newWaitCmdRun, []flagCase[waitOptions]{
		{[]string{"web"}, &waitOptions{name: "web"}, ""},
		{[]string{"--json", "web"}, &waitOptions{name: "web", asJSON: true}, ""},
		{[]string{}, nil, "one session NAME"},
		{[]string{"--jsn", "web"}, nil, "unknown flag: --jsn"},
	})
}
