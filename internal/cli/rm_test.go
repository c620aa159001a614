package cli

import "testing"

// TestRmFlags: rm's flags and names as parsed, without removing anything.
func TestRmFlags(t *testing.T) {
	checkFlags(t, "rm", ExitUsage, newRmCmdRun, []flagCase[rmOptions]{
		{[]string{"web"}, &rmOptions{names: []string{"web"}}, ""},
		{[]string{"-f", "web", "api"}, &rmOptions{names: []string{"web", "api"}, force: true}, ""},
		{[]string{"--run", "3f2a", "web"}, &rmOptions{names: []string{"web"}, run: "3f2a"}, ""},
		{[]string{}, nil, "want session names"},
		{[]string{"--run", "3f2a", "web", "api"}, nil, "--run takes one session name"},
		{[]string{"-x", "web"}, nil, "unknown shorthand flag"},
	})
}
