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
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/session"
)

func newStopCmd(e *env) *cobra.Command {
	var all, asJSON, kill bool
	var grace time.Duration
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
			if all == (len(args) > 0) {
				return exit(ExitUsage, errors.New("give session names or --all, not both or neither"))
			}
			if kill && cmd.Flags().Changed("grace") {
				return exit(ExitUsage, errors.New("--kill and --grace exclude each other"))
			}
			reg, err := openRegistry(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			if all {
				recs, _ := reg.ListLive()
				for _, r := range recs {
					if r.Live() {
						args = append(args, r.Name)
					}
				}
			}
			o := session.StopOptions{Grace: grace, Kill: kill}
			if cmd.Flags().Changed("grace") && grace == 0 {
				o.Grace = contain.NoGrace
			}
			killCh, abandon, stop := stopSignals()
			defer stop()
			o.KillOn = killCh
			ctx, cancel := context.WithTimeout(context.Background(), max(grace, 0)+10*time.Minute)
			defer cancel()
			go func() {
				select {
				case <-abandon:
					cancel()
				case <-ctx.Done():
				}
			}()
			var g time.Duration
			if cmd.Flags().Changed("grace") {
				g = grace
			}
			prog := newProgress(e, false, g, "^C kills at once")
			if prog != nil {
				o.Progress = prog.step
			}
			client := &session.Client{Registry: reg}
			results := client.StopMany(ctx, args, o)
			receipts := []*receipt.Receipt{}
			var errs []error
			code := ExitFailure
			for _, r := range results {
				if r.Err != nil {
					ee := sessionExit(r.Name, r.Err).(*exitError)
					errs = append(errs, ee.err)
					if ee.code == ExitUsage && len(args) == 1 {
						code = ExitUsage
					}
					continue
				}
				receipts = append(receipts, r.Receipt)
				prog.done(r.Name, r.Receipt, true)
				if !asJSON {
					fmt.Fprintln(e.stdout, stopSummary(r.Name, r.Receipt, reg.ReceiptPath(r.Name)))
				}
			}
			if asJSON {
				if err := printJSON(e, map[string]any{"schema_version": 1, "receipts": receipts}); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return exit(code, errors.Join(errs...))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "stop every live session of this user")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the receipts as one JSON document")
	durationVar(cmd.Flags(), &grace, "grace", 0, "time members get after the stop signal (default: the session's own; 0 kills at once, also a stop under way)")
	cmd.Flags().BoolVar(&kill, "kill", false, "kill the members at once, also of a stop already under way")
	return cmd
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
