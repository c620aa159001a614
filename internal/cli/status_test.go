package cli

import "testing"

// TestStatusFlags: status's flags and name as parsed, without reading
// any session.
func TestStatusFlags(t *testing.T) {
	checkFlags(t, "status", ExitUsage, newStatusCmdRun, []flagCase[statusOptions]{
		{[]string{"web"}, &statusOptions{name: "web", lines: 10}, ""},
		{[]string{"-n", "0", "--json", "web"}, &statusOptions{name: "web", asJSON: true}, ""},
		{[]string{"--lines", "3", "web"}, &statusOptions{name: "web", lines: 3}, ""},
		{[]string{"-n", "x", "web"}, nil, "lines"},
		{[]string{"web", "api"}, nil, "one session NAME"},
	})
}
