package cli

import (
	"github.com/spf13/cobra"
	"github.com/tether-run/tether/session"
)

func newLogsCmd(e *env) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs NAME [-f]",
		Short: "Print a session's output (stdout and stderr, interleaved)",
		Long: `Print what the session's command wrote. The log is bounded: past its size
it rotates once, and both parts are printed. With -f, keep printing new
output, across rotations, until the session has stopped (exit 0) or its
supervisor is gone (exit 1: nothing will write the log again; tether reap
reclaims the session).`,
		Example: `  tether logs web
  tether logs -f web`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := openRegistry(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			if err := session.Logs(reg, args[0], e.stdout, follow); err != nil {
				return sessionExit(args[0], err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log until the session stops")
	return cmd
}
