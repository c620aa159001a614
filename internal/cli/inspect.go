package cli

import (
	"github.com/spf13/cobra"
)

// inspectOptions is `tether inspect` as its flags and argument resolved it.
type inspectOptions struct {
	name string
	run  string // one run (--run), not the newest
}

func newInspectCmd(e *env) *cobra.Command { return newInspectCmdRun(e, runInspect) }

// newInspectCmdRun is newInspectCmd with run called on the parsed options.
func newInspectCmdRun(e *env, run func(*env, *inspectOptions) error) *cobra.Command {
	var o inspectOptions
	cmd := &cobra.Command{
		Use:   "inspect NAME [--run ID]",
		Short: "Print all that is on record of a session as one JSON document",
		Long: `Print one JSON document, as docker inspect does: the session's record (the
fields of tether status --json: state, command, owner, containment, times,
how it ended), the configuration it was started with ("config": command,
environment, working directory, owner, profile, until, ttl_ms, grace_ms,
kill_wait_ms, stop_signal, limits, pool, log bounds) and its stop receipt
("receipt", once it has ended). Times are RFC 3339 with their zone; null
means not known (a run whose supervisor was killed kept no configuration),
and "problems" says why when it should have been.

Without --run, the newest run of NAME; --run ID one of its earlier runs
(tether ls -a lists them; a prefix of the run id that only one run has
will do).`,
		Example: `  tether inspect web
  tether inspect web | jq .config.env
  tether inspect --run 3f2a9c web | jq .receipt.stop_confirmed`,
		Args:              namedArgs(1, cobra.ExactArgs(1)),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return run(e, &o)
		},
	}
	cmd.Flags().StringVar(&o.run, "run", "", "the run with this run `ID` (or a prefix of it), not the newest")
	cmd.RegisterFlagCompletionFunc("run", completeRuns(e))
	return cmd
}

// runInspect prints all that is on record of o's session and run.
func runInspect(e *env, o *inspectOptions) error {
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	defer client.Close()
	in, err := client.Inspect(o.name, o.run)
	if err != nil {
		return sessionExit(o.name, err)
	}
	return printJSON(e, in)
}
