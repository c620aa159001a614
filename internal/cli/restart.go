package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/session"
)

// restartOptions is `tether restart` as its flags and argument resolved
// it.
type restartOptions struct {
	name string
	// stop is how a running session is stopped: its Grace is
	// contain.NoGrace for --grace 0, 0 (the session's own) unset.
	stop  session.StopOptions
	owner string
	quiet bool
	json  bool
}

func newRestartCmd(e *env) *cobra.Command { return newRestartCmdRun(e, runRestart) }

// newRestartCmdRun is newRestartCmd with run called on the parsed options.
func newRestartCmdRun(e *env, run func(*env, *restartOptions) error) *cobra.Command {
	var o restartOptions
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "restart [--grace D | --kill] [--owner OWNER] [-q] [--json] NAME",
		Short: "Stop a session if it runs and start it again as it was started",
		Long: `Start session NAME again as its newest run was started — the same command,
environment, working directory, owner, profile, --until, --ttl, stop
signal, limits, pool, log bounds and --ready checks — as a new run with a
run id of its own, stopping it first with the stop protocol if it runs
(as tether stop does: --grace, --kill). The earlier run's log and receipt
stay (tether ls -a, tether logs --run).

An owner that was a process (a PID, or parent) is kept while that very
process runs; if it is gone, restart refuses before stopping anything:
give --owner (a PID, parent, session:NAME or none).

Prints the session's name on stdout, as tether start does (--json: its
status). Exit status as tether start's.`,
		Example: `  tether restart web
  tether restart --grace 2 --owner none web`,
		Args:              namedArgs(1, cobra.ExactArgs(1)),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			if cmd.Flags().Changed("grace") {
				if o.stop.Kill {
					return exit(ExitUsage, errors.New("--kill and --grace exclude each other"))
				}
				o.stop.Grace = grace
				if grace == 0 {
					o.stop.Grace = contain.NoGrace
				}
			}
			return run(e, &o)
		},
	}
	fl := cmd.Flags()
	durationVar(fl, &grace, "grace", 0, "time members get after the stop signal if it runs (default: the session's own; 0 kills at once)")
	fl.BoolVar(&o.stop.Kill, "kill", false, "kill a running session's members at once")
	fl.StringVar(&o.owner, "owner", "", "`OWNER` for the new run instead of the old one's: PID, parent, session:NAME or none")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing of tether's own but errors")
	fl.BoolVar(&o.json, "json", false, "print the new run's status as JSON")
	return cmd
}

// runRestart stops o's session if it runs and starts it again.
func runRestart(e *env, o *restartOptions) error {
	name := o.name
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	defer client.Close()
	stop, rec, err := client.Restart(context.Background(), name, session.RestartOptions{Stop: o.stop, Owner: o.owner})
	if stop != nil && !o.quiet {
		confirmed := "confirmed"
		if !stop.StopConfirmed {
			confirmed = "NOT confirmed"
		}
		e.warnf("stopped %q (run %s): %d %s, stop %s", name, shortRun(stop.RunID), stop.Evidence.MembersSeen,
			plural(stop.Evidence.MembersSeen, "process", "processes"), confirmed)
	}
	if err != nil {
		return startFailed(e, name, err)
	}
	if !o.quiet {
		e.warnf("started session %q again, run %s (%s)", rec.Name, shortRun(rec.RunID), lifetime(rec))
	}
	if o.json {
		return printJSON(e, session.StatusOf(rec))
	}
	fmt.Fprintln(e.stdout, rec.Name)
	return nil
}
