package cli

import (
	"fmt"
	"syscall"

	"github.com/spf13/cobra"
)

// killOptions is `tether kill` as its flags and argument resolved it.
type killOptions struct {
	name string
	sig  syscall.Signal
	all  bool
}

func newKillCmd(e *env) *cobra.Command { return newKillCmdRun(e, runKill) }

// newKillCmdRun is newKillCmd with run called on the parsed options.
func newKillCmdRun(e *env, run func(*env, *killOptions) error) *cobra.Command {
	var o killOptions
	var sigName string
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
			o.name = args[0]
			var err error
			if o.sig, err = parseSignal(sigName); err != nil {
				return exit(ExitUsage, err)
			}
			return run(e, &o)
		},
	}
	cmd.Flags().StringVarP(&sigName, "signal", "s", "TERM", "the `SIG` to send: a name (HUP, SIGUSR1) or a number")
	cmd.Flags().BoolVar(&o.all, "all", false, "signal every process of the session, not only its main process")
	return cmd
}

// runKill signals o's session's main process, or with --all its every
// member.
func runKill(e *env, o *killOptions) error {
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	n, err := client.Kill(o.name, o.sig, o.all)
	if err != nil {
		return sessionExit(o.name, err)
	}
	if n == 0 {
		return exit(ExitFailure, fmt.Errorf("session %q: no process was signalled (its members are gone)", o.name))
	}
	return nil
}
