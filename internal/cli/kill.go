package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newKillCmd(e *env) *cobra.Command {
	var sigName string
	var all bool
	cmd := &cobra.Command{
		Use:   "kill [-s SIG] [--all] NAME",
		Short: "Send a signal to a session's main process, or every member, without stopping it",
		Long: `Send a signal (SIGTERM unless -s says another) to session NAME's main
process, or with --all to every process in its group, as kill(1) or
docker kill -s do: no stop protocol runs, and the session is not stopped
by it — unless its processes end of the signal, and then its end policy
(--until) stops it as when they exit of themselves. A reload is
tether kill -s HUP NAME; to stop a session, use tether stop.

Each process is proven before it is signalled: the main process by its
recorded identity (boot id, pid, start time through a pidfd), a member
by its pidfd's cgroup being the session's leaf. --all needs that leaf
(Linux, the cgroup mechanism). Exit status: 0 if a process was
signalled, 1 if none was (an ended session, a main process already
gone), 2 for a bad signal or name.`,
		Example: `  tether kill -s HUP web        # reload the server
  tether kill --all -s USR1 web  # every process of the session`,
		Args:              namedArgs(1, cobra.ExactArgs(1)),
		ValidArgsFunction: completeSessions(e, false, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			sig, err := parseSignal(sigName)
			if err != nil {
				return exit(ExitUsage, err)
			}
			client, err := openClient(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			n, err := client.Kill(args[0], sig, all)
			if err != nil {
				return sessionExit(args[0], err)
			}
			if n == 0 {
				return exit(ExitFailure, fmt.Errorf("session %q: no process was signalled (its members are gone)", args[0]))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&sigName, "signal", "s", "TERM", "the `SIG` to send: a name (HUP, SIGUSR1) or a number")
	cmd.Flags().BoolVar(&all, "all", false, "signal every process of the session, not only its main process")
	return cmd
}
