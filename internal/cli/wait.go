package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/session"
)

// waitOptions is `tether wait` as its flags and argument resolved it.
type waitOptions struct {
	name   string
	asJSON bool
}

func newWaitCmd(e *env) *cobra.Command { return newWaitCmdRun(e, runWait) }

// newWaitCmdRun is newWaitCmd with run called on the parsed options.
func newWaitCmdRun(e *env, run func(*env, *waitOptions) error) *cobra.Command {
	var o waitOptions
	cmd := &cobra.Command{
		Use:   "wait NAME [--json]",
		Short: "Wait for a session to end; exit with its exit code",
		Long: `Wait until the session has ended, then exit with the code tether run would
have: the main process's status, 128+n for signal n, 124 when its TTL
expired; 1 when it ended without an exit status (its start failed, or
tether reap finished it). With --json, print its final status first: the
document tether status --json prints, with its stop reason, exit and
receipt path.`,
		Example: `  tether wait web && echo "web exited 0"
  tether wait --json web | jq .exit`,
		Args:              namedArgs(1, cobra.ExactArgs(1)),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return run(e, &o)
		},
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the session's final status as one JSON document")
	return cmd
}

// runWait waits for o's session to end and exits with its code.
func runWait(e *env, o *waitOptions) error {
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	rec, err := client.Wait(context.Background(), o.name)
	if err != nil {
		return sessionExit(o.name, err)
	}
	if o.asJSON {
		if err := printJSON(e, session.StatusOf(rec)); err != nil {
			return exit(ExitFailure, err)
		}
	}
	if rec.Exit == nil {
		return exit(ExitFailure, nil)
	}
	if rec.Exit.Code != 0 {
		return exit(rec.Exit.Code, nil)
	}
	return nil
}
