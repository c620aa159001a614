package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// envOptions is `tether env` as its flags and argument resolved it.
type envOptions struct {
	name   string
	asJSON bool
}

func newEnvCmd(e *env) *cobra.Command { return newEnvCmdRun(e, runEnv) }

// newEnvCmdRun is newEnvCmd with run called on the parsed options.
func newEnvCmdRun(e *env, run func(*env, *envOptions) error) *cobra.Command {
	var o envOptions
	cmd := &cobra.Command{
		Use:   "env NAME [--json]",
		Short: "Print a session's environment as export lines for eval",
		Long: `Print the variables tether set in session NAME's environment — TETHER_SESSION,
TETHER_SESSION_DIR, TMPDIR, and its profile's (TMUX_TMPDIR for tmux;
PWTEST_SOCKETS_DIR and PWTEST_DAEMON_SESSION_DIR for playwright) — as
shell export lines, so that a shell reaches the session's daemons through
their sockets: eval "$(tether env NAME)". With --json, one JSON object of
name to value.

What runs after the eval runs beside the session, not in it: what it
starts is not the session's. tether exec runs a command in the session.
A session that has ended is refused (exit 1): its dirs are gone.`,
		Example: `  eval "$(tether env work)" && tmux ls
  tether env web --json`,
		Args:              namedArgs(1, cobra.ExactArgs(1)),
		ValidArgsFunction: completeSessions(e, false, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return run(e, &o)
		},
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print one JSON object")
	return cmd
}

// runEnv prints the variables tether set in o's session as export lines
// or one JSON object.
func runEnv(e *env, o *envOptions) error {
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	vars, err := client.Env(o.name)
	if err != nil {
		return sessionExit(o.name, err)
	}
	if o.asJSON {
		m := map[string]string{}
		for _, kv := range vars {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		return printJSON(e, m)
	}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(e.stdout, "export %s=%s\n", k, shellQuote(v))
	}
	return nil
}

// shellQuote quotes s for a POSIX shell: in single quotes, with each
// single quote written as '\”.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
