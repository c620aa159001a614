package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/session"
)

// stopOptions is `tether stop` as its flags and arguments resolved it.
type stopOptions struct {
	names  []string
	all    bool
	asJSON bool
	kill   bool
	// grace is the grace given with --grace (graceSet): contain.NoGrace
	// for --grace 0; unset, each session's own.
	grace    time.Duration
	graceSet bool
}

func newStopCmd(e *env) *cobra.Command { return newStopCmdRun(e, runStop) }

// newStopCmdRun is newStopCmd with run called on the parsed options:
// tests give their own to check the parsing without stopping anything.
func newStopCmdRun(e *env, run func(*env, *stopOptions) error) *cobra.Command {
	var o stopOptions
	cmd := &cobra.Command{
		Use:   "stop NAME... | --all",
		Short: "Stop sessions with the stop protocol and print their receipts",
		Long: `Stop each named session (or, with --all, every live session of this user):
its supervisor stops the sessions it owns first, then runs the stop protocol
(its stop signal, SIGTERM unless started with --signal; --grace;
cgroup.kill; reap), records the receipt and removes the
session's runtime dir. Every session is asked at once and waited for under
one deadline. Every session is attempted even when one fails; the exit
status is 1 if any failed, and stderr names each failure.

Prints a line per session: how many processes were stopped and how they
ended, whether the stop is confirmed, and where the receipt is; --json
prints the receipts themselves, each with its session's "name".

A stop of a session that is already stopping joins that stop: it waits for
the same end and prints the same receipt. Only --kill or --grace 0 change a
stop under way: its members are killed at once.

SIGINT, SIGTERM or SIGHUP while waiting: the first kills what is still
stopping (as --kill), the second stops waiting (the supervisors finish the
stops on their own).`,
		Example: `  tether stop web
  tether stop --grace 2 web api
  tether stop --all --json > receipts.json`,
		Args:              namedArgs(-1, cobra.ArbitraryArgs),
		ValidArgsFunction: completeSessions(e, false, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names, o.graceSet = args, cmd.Flags().Changed("grace")
			if o.all == (len(args) > 0) {
				return exit(ExitUsage, errors.New("give session names or --all, not both or neither"))
			}
			if o.kill && o.graceSet {
				return exit(ExitUsage, errors.New("--kill and --grace exclude each other"))
			}
			if o.graceSet && o.grace == 0 {
				o.grace = contain.NoGrace
			}
			return run(e, &o)
		},
	}
	cmd.Flags().BoolVar(&o.all, "all", false, "stop every live session of this user")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print the receipts as one JSON document")
	durationVar(cmd.Flags(), &o.grace, "grace", 0, "time members get after the stop signal (default: the session's own; 0 kills at once, also a stop under way)")
	cmd.Flags().BoolVar(&o.kill, "kill", false, "kill the members at once, also of a stop already under way")
	return cmd
}

// runStop stops the sessions o names (all live ones with --all) under one
// deadline, and prints a line or, with --json, the receipt of each.
func runStop(e *env, o *stopOptions) error {
	reg, err := openRegistry(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	names := o.names
	if o.all {
		recs, _ := reg.ListLive()
		for _, r := range recs {
			if r.Live() {
				names = append(names, r.Name)
			}
		}
	}
	so := session.StopOptions{Kill: o.kill}
	var shown time.Duration // the grace progress shows: 0 when each session's own
	if o.graceSet {
		so.Grace, shown = o.grace, max(o.grace, 0)
	}
	killCh, abandon, stop := stopSignals()
	defer stop()
	so.KillOn = killCh
	ctx, cancel := context.WithTimeout(context.Background(), shown+10*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-abandon:
			cancel()
		case <-ctx.Done():
		}
	}()
	prog := newProgress(e, false, shown, "^C kills at once")
	if prog != nil {
		so.Progress = prog.step
	}
	client, err := session.Open(reg.Dir)
	if err != nil {
		return exit(ExitFailure, err)
	}
	defer client.Close()
	return printStops(e, o, reg, prog, client.StopMany(ctx, names, so))
}

// printStops prints each stop's line or, with --json, the receipts, and
// returns the failures: exit 1, or 2 when the one session named is bad.
func printStops(e *env, o *stopOptions, reg *store.Registry, prog *progress, results []session.StopResult) error {
	receipts := []*receipt.Receipt{}
	var errs []error
	code := ExitFailure
	for _, r := range results {
		if r.Err != nil {
			ee := sessionExit(r.Name, r.Err).(*exitError)
			errs = append(errs, ee.err)
			if ee.code == ExitUsage && len(results) == 1 {
				code = ExitUsage
			}
			continue
		}
		receipts = append(receipts, r.Receipt)
		prog.done(r.Name, r.Receipt, true)
		if !o.asJSON {
			fmt.Fprintln(e.stdout, stopSummary(r.Name, r.Receipt, reg.ReceiptPath(r.Name, r.Receipt.RunID)))
		}
	}
	if o.asJSON {
		if err := printJSON(e, map[string]any{"schema_version": 1, "receipts": receipts}); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return exit(code, errors.Join(errs...))
	}
	return nil
}

// stopSummary is stop's line for one session: what was stopped and how
// it ended, whether the stop is confirmed, and where its receipt is.
func stopSummary(name string, r *receipt.Receipt, receiptPath string) string {
	n := r.Evidence.MembersSeen
	var how string
	switch {
	case n == 0:
		how = "nothing was running"
	case r.Evidence.KillUsed:
		how = fmt.Sprintf("%d %s, the kill needed after the grace", n, plural(n, "process", "processes"))
	default:
		how = fmt.Sprintf("%d %s, ended on %s", n, plural(n, "process", "processes"), cmp.Or(r.Stop.Signal, "the stop signal"))
	}
	confirmed := "confirmed"
	if !r.StopConfirmed {
		confirmed = "NOT confirmed (the receipt's evidence says why)"
	}
	where := "no receipt written"
	if _, err := os.Stat(receiptPath); receiptPath != "" && err == nil {
		where = "receipt " + receiptPath
	}
	return fmt.Sprintf("%s\tstopped (%s): %s; %s; %s", name, r.Stop.Reason, how, confirmed, where)
}

// stopSignals turns the first SIGINT, SIGTERM or SIGHUP into closing kill
// and the second into closing abandon; stop ends the watch.
func stopSignals() (kill, abandon <-chan struct{}, stop func()) {
	k, a := make(chan struct{}), make(chan struct{})
	ch := make(chan os.Signal, 4)
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-ch:
				n++
				switch n {
				case 1:
					close(k)
				case 2:
					close(a)
				}
			}
		}
	}()
	return k, a, func() {
		signal.Stop(ch)
		close(done)
	}
}
