package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// execOptions is `tether exec` as its flags and arguments resolved it.
type execOptions struct {
	name             string
	argv             []string
	tty, interactive bool
	set              []string // --env-file's and --env's variables, in order
	dir              string   // absolute
}

func newExecCmd(e *env) *cobra.Command { return newExecCmdRun(e, runExec) }

// newExecCmdRun is newExecCmd with run called on the parsed options.
func newExecCmdRun(e *env, run func(*env, *execOptions) error) *cobra.Command {
	var o execOptions
	var envs, envFiles []string
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

COMMAND runs in a session of its own. Without -t it has no controlling
terminal (like docker exec without -t): ^C reaches it through tether
exec. With -t it gets a terminal of its own (a pty, like docker exec -t):
a shell's prompt, job control and line editing work, keys such as ^C and
^Z go to it as typed (your terminal is put in raw mode meanwhile and
restored after), and a resize of your window reaches it. -e sets
variables over the session's own (your values win), -w runs COMMAND in
DIR instead of the current directory.

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
  tether start --name work --profile tmux -- tmux new -d -s main
  tether exec work -- tmux ls
  tether exec -it web -- bash
  tether exec -e DEBUG=1 -w /srv/app web -- ./check.sh`,
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
			if err := o.check(args, envFiles, envs); err != nil {
				return exit(ExitTether, err)
			}
			return run(e, &o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.tty, "tty", "t", false, "give COMMAND a terminal of its own (a pty), relayed to yours")
	fl.BoolVarP(&o.interactive, "interactive", "i", false, "keep stdin attached (always so: accepted for docker's -it)")
	fl.StringArrayVarP(&envs, "env", "e", nil, "set `KEY=VALUE` over the session's own variables (repeatable; after --env-file)")
	fl.StringArrayVar(&envFiles, "env-file", nil, envFileHelp)
	fl.StringVarP(&o.dir, "workdir", "w", "", "run COMMAND in `DIR` (default: the current directory)")
	cmd.MarkFlagDirname("workdir")
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// check resolves into o NAME and COMMAND (args), the variables set
// (--env-file read) and the working directory.
func (o *execOptions) check(args, envFiles, envs []string) (err error) {
	o.name, o.argv = args[0], args[1:]
	if o.set, err = envVars(envFiles, envs); err != nil {
		return err
	}
	if o.dir == "" {
		o.dir, err = os.Getwd()
		return err
	}
	o.dir, err = filepath.Abs(o.dir)
	return err
}

// runExec runs o's command in its session and exits with its status.
func runExec(e *env, o *execOptions) error {
	name := o.name
	client, err := openClient(e)
	if err != nil {
		return exit(ExitTether, err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwardedSignals...)
	defer signal.Stop(sigs)
	eo := session.ExecOptions{
		Argv: o.argv, Env: os.Environ(), Set: o.set, Dir: o.dir,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Signals: sigs,
	}
	var res receipt.Exit
	if o.tty {
		var relay *ptyRelay
		if relay, err = openRelay(os.Stdin, os.Stdout); err != nil {
			return exit(ExitTether, fmt.Errorf("exec -t: %w", err))
		}
		eo.Stdin, eo.Stdout, eo.Stderr, eo.Terminal = relay.replica, relay.replica, relay.replica, true
		res, err = client.Exec(context.Background(), name, eo)
		relay.close()
	} else {
		res, err = client.Exec(context.Background(), name, eo)
	}
	if err != nil {
		var se *session.StartError
		if errors.As(err, &se) && se.Code != 0 {
			return exit(se.Code, err)
		}
		var re *registry.Error
		if !errors.As(err, &re) {
			err = fmt.Errorf("session %q: %w", name, err)
		}
		return exit(ExitTether, err)
	}
	if res.Code != 0 {
		return exit(res.Code, nil)
	}
	return nil
}
