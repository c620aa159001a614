package cli

import (
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
)

// TestStopFlags: stop's flags and names as parsed, checked without
// stopping anything (the command's run is replaced).
func TestStopFlags(t *testing.T) {
	checkFlags(t, "stop", ExitUsage, newStopCmdRun, []flagCase[stopOptions]{
		{[]string{"web"}, &stopOptions{names: []string{"web"}}, ""},
		{[]string{"--grace", "2s", "web", "api"}, &stopOptions{names: []string{"web", "api"}, grace: 2 * time.Second, graceSet: true}, ""},
		{[]string{"--grace", "0", "web"}, &stopOptions{names: []string{"web"}, grace: contain.NoGrace, graceSet: true}, ""},
		{[]string{"--all", "--json"}, &stopOptions{names: []string{}, all: true, asJSON: true}, ""},
		{[]string{"--kill", "web"}, &stopOptions{names: []string{"web"}, kill: true}, ""},
		{[]string{}, nil, "names or --all"},
		{[]string{"--all", "web"}, nil, "names or --all"},
		{[]string{"--kill", "--grace", "1s", "web"}, nil, "exclude each other"},
		{[]string{"--grace", "soon", "web"}, nil, "soon"},
		{[]string{"Bad/name"}, nil, "Bad/name"},
	})
}
