package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
)

// reapOptions is `tether reap` as its flags resolved it.
type reapOptions struct {
	reap   reap.Options
	asJSON bool
}

func newReapCmd(e *env) *cobra.Command { return newReapCmdRun(e, runReap) }

// newReapCmdRun is newReapCmd with run called on the parsed options.
func newReapCmdRun(e *env, run func(*env, *reapOptions) error) *cobra.Command {
	var o reapOptions
	cmd := &cobra.Command{
		Use:   "reap [--dry-run] [--json] [--orphan-leaves]",
		Short: "Reclaim what crashed tethers left behind",
		Long: `Walk this user's records (runs and sessions) and reclaim what crashed owners
left: a session or run whose supervisor is gone is stopped through its leaf,
held anew after checking its cgroup id against the record; without a leaf,
only the recorded main process is stopped, and only if its boot id, pid and
start time still match through a pidfd. Records from an earlier boot are
cleaned. Nothing whose identity cannot be proven is signalled: it is
reported. Corrupt records are quarantined (renamed, with the reason), never
deleted. Records, dirs and sockets of other users, or open to them, or
symlinked, are refused and reported.

Leaves without a record are reported and never killed (nothing proves
who made them); --orphan-leaves removes those that are empty and older
than a minute. Runtime dirs without a record, temp files of interrupted
writes, stop requests whose supervisor is gone and empty logs of starts
that never claimed their name are removed once older than a minute.
--dry-run prints the plan and does nothing. Exit status 1 if any action
failed.`,
		Example: `  tether reap --dry-run
  tether reap --json --prune 168h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.reap.Grace == 0 {
				o.reap.Grace = reap.NoGrace // --grace 0: none, as for run and stop
			}
			return run(e, &o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.reap.DryRun, "dry-run", false, "print the plan; change nothing")
	fl.BoolVar(&o.asJSON, "json", false, "print one JSON document")
	fl.BoolVar(&o.reap.OrphanLeaves, "orphan-leaves", false, "also remove empty tether leaves, older than a minute, that no record refers to (populated ones are never killed)")
	durationVar(fl, &o.reap.Grace, "grace", 2*time.Second, "time members get after the stop signal (the session's --signal, else SIGTERM); 0: none")
	durationVar(fl, &o.reap.Prune, "prune", 0, "delete ended records, logs and receipts, and the not_run receipts of refused starts, older than this (0: keep)")
	return cmd
}

// runReap reclaims what crashed owners left and prints the report; exit
// 1 if an action failed.
func runReap(e *env, o *reapOptions) error {
	reg, err := openRegistry(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	rep := reap.Run(reg, o.reap)
	if o.asJSON {
		if err := printJSON(e, rep); err != nil {
			return err
		}
	} else {
		printReap(e, rep)
	}
	for _, a := range rep.Actions {
		if a.Error != "" && a.Class != reap.Unresolvable && a.Class != reap.Unsafe && a.Class != reap.Corrupt || (a.Class == reap.Corrupt && !a.Done && !o.reap.DryRun) {
			return exit(ExitFailure, errors.New("some records could not be reaped (see above)"))
		}
	}
	return nil
}

func printReap(e *env, rep *reap.Report) {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tCLASS\tPLAN\tRESULT")
	for _, a := range rep.Actions {
		res := "done"
		switch {
		case a.Error != "":
			res = "error: " + a.Error
		case rep.DryRun:
			res = "planned"
		case !a.Done:
			res = "left alone"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", a.Name, a.Class, a.Plan, res)
	}
	w.Flush()
	for _, l := range rep.OrphanLeaves {
		state := l.Plan
		if l.Removed {
			state = "removed"
		} else if l.Error != "" {
			state = "error: " + l.Error
		}
		fmt.Fprintf(e.stdout, "orphan leaf %s (id %d, %d processes): %s\n", l.Path, l.ID, l.Procs, state)
	}
}

// quickReap reclaims provably dead records before a start, unless turned
// off (--no-reap or TETHER_NO_REAP=1). Failures are warnings.
func quickReap(e *env, reg *store.Registry, off bool) {
	if off || e.getenv("TETHER_NO_REAP") == "1" || reg == nil {
		return
	}
	// Cheap: a short grace, since it delays the caller's own start.
	for _, a := range reap.Run(reg, reap.Options{Quick: true, Grace: 200 * time.Millisecond}).Actions {
		if a.Error != "" {
			e.warnf("reap %s: %s", a.Name, a.Error)
		}
	}
}
