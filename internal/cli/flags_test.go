package cli

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// flagCase is one command line of a Test<Cmd>Flags: want is the options
// it parses to, or nil for a usage error whose message holds err.
type flagCase[O any] struct {
	args []string
	want *O
	err  string
}

// checkFlags parses each case's args with the command newCmd builds, its
// run replaced by one that records the options and runs nothing. A good
// case must parse to want; a bad one must exit with code (as Main would
// exit) saying err, without reaching run.
func checkFlags[O any](t *testing.T, name string, code int, newCmd func(*env, func(*env, *O) error) *cobra.Command, cases []flagCase[O]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var got *O
			e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
			cmd := newCmd(e, func(_ *env, o *O) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tc.want == nil {
				if err == nil || exitCode(name, err) != code || !strings.Contains(err.Error(), tc.err) || got != nil {
					t.Errorf("%s %q = %v, exit %d (ran: %t); want exit %d saying %q", name, tc.args, err, exitCode(name, err), got != nil, code, tc.err)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("%s %q = %v; want it parsed", name, tc.args, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s %q parsed %+v; want %+v", name, tc.args, *got, *tc.want)
			}
		})
	}
}
