package cli

import (
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/session"
)

// TestRestartFlags: restart's flags and name as parsed, without stopping
// or starting anything.
func TestRestartFlags(t *testing.T) {
	checkFlags(t, "restart", ExitUsage, newRestartCmdRun, []flagCase[restartOptions]{
		{[]string{"web"}, &restartOptions{name: "web"}, ""},
		{[]string{"--grace", "2", "web"}, &restartOptions{name: "web", stop: session.StopOptions{Grace: 2 * time.Second}}, ""},
		{[]string{"--grace", "0", "--owner", "none", "-q", "--json", "web"}, &restartOptions{name: "web", stop: session.StopOptions{Grace: contain.NoGrace}, owner: "none", quiet: true, json: true}, ""},
		{[]string{"--kill", "web"}, &restartOptions{name: "web", stop: session.StopOptions{Kill: true}}, ""},
		{[]string{"--kill", "--grace", "1", "web"}, nil, "--kill and --grace exclude each other"},
		{[]string{"web", "api"}, nil, "one session NAME"},
	})
}
