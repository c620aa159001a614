package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

func newExecCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec NAME [--] COMMAND [ARG...]",
		Short: "Run a command inside a session, with the session's environment",
		Long: `Run COMMAND as a member of session NAME: the session's supervisor clones it
into the session's cgroup, so whatever it starts belongs to the session —
held by the kernel, listed, and stopped with it — whatever the caller does
next (a daemon a tool call starts through tether exec cannot leak). Its
environment is the caller's with the session's own variables set over it
(TETHER_SESSION, TETHER_SESSION_DIR, TMPDIR and the profile's, see tether
env), so the session's daemons are reached through their sockets after the
caller's scratch is gone. stdin, stdout and stderr are the caller's;
SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are forwarded.

COMMAND runs in a session of its own, without a controlling terminal (like
docker exec without -t): ^C reaches it through tether exec; programs that
need a terminal of their own (a shell's job control) do not get one.

On Windows the supervisor creates COMMAND in the session's job; ^C ends
it (TerminateProcess: a console break cannot reach another console).

A session that has ended, is stopping, or runs under the fallback
mechanism (no cgroup to join) is refused. To run something beside a
session rather than in it: eval "$(tether env NAME)"; COMMAND.

Exit status: COMMAND's own (128+n if it died of signal n); 125 when tether
could not run it in the session, bad usage included; 126 not executable;
127 not found.`,
		Example: `  tether start --name web --profile playwright -- playwright-cli open https://example.com
  tether exec web -- playwright-cli snapshot
  tether start --name work --profile tmux --until empty -- tmux new -d -s main
  tether exec work -- tmux ls`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || (args[1] == "--" && len(args) < 3) {
				return errors.New("usage: tether exec NAME [--] COMMAND [ARG...]")
			}
			return registry.CheckName(args[0])
		},
		ValidArgsFunction: completeSessions(e, false, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[1] == "--" { // flags stop at NAME: cobra keeps this "--"
				args = append([]string{args[0]}, args[2:]...)
			}
			client, err := openClient(e)
			if err != nil {
				return exit(ExitTether, err)
			}
			dir, err := os.Getwd()
			if err != nil {
				return exit(ExitTether, err)
			}
			sigs := make(chan os.Signal, 8)
			signal.Notify(sigs, forwardedSignals...)
			defer signal.Stop(sigs)
			res, err := client.Exec(context.Background(), args[0], session.ExecOptions{
				Argv: args[1:], Env: os.Environ(), Dir: dir,
				Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Signals: sigs,
			})
			if err != nil {
				var se *session.StartError
				if errors.As(err, &se) && se.Code != 0 {
					return exit(se.Code, err)
				}
				var re *registry.Error
				if !errors.As(err, &re) {
					err = fmt.Errorf("session %q: %w", args[0], err)
				}
				return exit(ExitTether, err)
			}
			if res.Code != 0 {
				return exit(res.Code, nil)
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false)
	return cmd
}
