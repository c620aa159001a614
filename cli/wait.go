package cli

import (
	"github.com/spf13/cobra"
	"github.com/tether-run/tether/session"
)

func newWaitCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait for a session to end; exit with its exit code",
		Long: `Wait until the session has ended, then exit with the code tether run would
have: the main process's status, 128+n for signal n, 124 when its TTL
expired.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := openRegistry(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			rec, err := session.Wait(reg, args[0])
			if err != nil {
				return sessionExit(args[0], err)
			}
			if rec.Exit == nil {
				return exit(ExitFailure, nil)
			}
			if rec.Exit.Code != 0 {
				return exit(rec.Exit.Code, nil)
			}
			return nil
		},
	}
}
