package cli

import "testing"

// TestEnvFlags: env's flags and name as parsed, without reading any
// session.
func TestEnvFlags(t *testing.T) {
	checkFlags(t, "env", ExitUsage, newEnvCmdRun, []flagCase[envOptions]{
		{[]string{"web"}, &envOptions{name: "web"}, ""},
		{[]string{"web", "--json"}, &envOptions{name: "web", asJSON: true}, ""},
		{[]string{"web", "api"}, nil, "one session NAME"},
		{[]string{".web"}, nil, ".web"},
	})
}
