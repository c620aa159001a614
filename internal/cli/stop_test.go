package cli

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
)

// TestStopFlags: stop's flags and names as parsed, checked without
// stopping anything (the command's run is replaced).
func TestStopFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *stopOptions // nil: a usage error saying err
		err  string
	}{
		{[]string{"web"}, &stopOptions{names: []string{"web"}}, ""},
		{[]string{"--grace", "2s", "web", "api"}, &stopOptions{names: []string{"web", "api"}, grace: 2 * time.Second, graceSet: true}, ""},
		{[]string{"--grace", "0", "web"}, &stopOptions{names: []string{"web"}, grace: contain.NoGrace, graceSet: true}, ""},
		{[]string{"--all", "--json"}, &stopOptions{all: true, asJSON: true}, ""},
		{[]string{"--kill", "web"}, &stopOptions{names: []string{"web"}, kill: true}, ""},
		{[]string{}, nil, "names or --all"},
		{[]string{"--all", "web"}, nil, "names or --all"},
		{[]string{"--kill", "--grace", "1s", "web"}, nil, "exclude each other"},
	} {
		var got *stopOptions
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		cmd := newStopCmdRun(e, func(_ *env, o *stopOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		err := cmd.Execute()
		if tc.want == nil {
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != ExitUsage || !strings.Contains(err.Error(), tc.err) || got != nil {
				t.Errorf("stop %q = %v (ran: %t); want a usage error saying %q", tc.args, err, got != nil, tc.err)
			}
			continue
		}
		if err != nil || got == nil {
			t.Errorf("stop %q = %v; want it parsed", tc.args, err)
			continue
		}
		if !slices.Equal(got.names, tc.want.names) || got.all != tc.want.all || got.asJSON != tc.want.asJSON ||
			got.kill != tc.want.kill || got.grace != tc.want.grace || got.graceSet != tc.want.graceSet {
			t.Errorf("stop %q parsed %+v; want %+v", tc.args, *got, *tc.want)
		}
	}
}
