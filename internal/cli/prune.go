package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/internal/store"
)

// pruneOptions is `tether prune` as its flags resolved it.
type pruneOptions struct {
	older    time.Duration
	olderSet bool
	dryRun   bool
	asJSON   bool
}

func newPruneCmd(e *env) *cobra.Command { return newPruneCmdRun(e, runPrune) }

// newPruneCmdRun is newPruneCmd with run called on the parsed options.
func newPruneCmdRun(e *env, run func(*env, *pruneOptions) error) *cobra.Command {
	var o pruneOptions
	cmd := &cobra.Command{
		Use:   "prune [--older D] [--dry-run] [--json]",
		Short: "Remove ended runs past the retention bound, or older than --older",
		Long: fmt.Sprintf(`Remove the ended runs of this user's sessions — records, logs, receipts and
configurations — that the retention bound does not keep, or with --older D
every ended run that ended more than D ago. Live sessions, and runs whose
stop was not confirmed (tether reap's), are never touched.

The retention bound is applied without asking whenever a session ends:
%s.
%s=COUNT,AGE[,SETTLE] (as 50,30d; 0 for no such bound) or %s=off
changes it, for the sessions started with it and for tether prune. A run is
kept for SETTLE (1m) after it ends whatever COUNT says, so that whoever
stopped it reads its receipt; tether prune itself does not wait for that.

Prints a line per run removed (--dry-run: that would be); --json one
document. Exit status 1 if a run could not be removed or read.`, retentionText(), store.RetainEnv, store.RetainEnv),
		Example: `  tether prune
  tether prune --older 24h --dry-run
  TETHER_RETAIN=5,1d tether prune --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.olderSet = cmd.Flags().Changed("older")
			return run(e, &o)
		},
	}
	durationVar(cmd.Flags(), &o.older, "older", 0, "remove every ended run that ended more than `D` ago (instead of the retention bound)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print what would be removed; remove nothing")
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print one JSON document")
	return cmd
}

// retentionText says what the default retention keeps.
func retentionText() string {
	rt := store.DefaultRetention
	return fmt.Sprintf("the last %d ended runs, none that ended more than %d days ago", rt.Keep, rt.MaxAge/(24*time.Hour))
}

// runPrune removes the ended runs o's bound does not keep.
func runPrune(e *env, o *pruneOptions) error {
	rt, err := store.RetentionFromEnv(e.getenv)
	if err != nil {
		return exit(ExitUsage, err)
	}
	rt.Settle = 0 // asked for now: no stopper of its own is reading
	if o.olderSet {
		// --older 0 is every ended run: a bound of a nanosecond.
		rt = store.Retention{MaxAge: max(o.older, time.Nanosecond)}
	}
	reg, err := openRegistry(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	removed, errs := reg.Prune(rt, time.Now(), o.dryRun)
	if err := printRemoved(e, removed, o.asJSON, o.dryRun); err != nil {
		return err
	}
	if len(errs) > 0 {
		return exit(ExitFailure, errors.Join(errs...))
	}
	return nil
}

// removedRun is one removed run in rm's and prune's --json.
type removedRun struct {
	Name    string    `json:"name"`
	RunID   string    `json:"run_id"`
	Kind    string    `json:"kind"`
	State   string    `json:"state"`
	EndedAt time.Time `json:"ended_at"`
	Files   []string  `json:"files"`
}

// printRemoved prints the runs removed (dry: that would be), a line each
// or as one JSON document.
func printRemoved(e *env, removed []store.Removed, asJSON, dry bool) error {
	if asJSON {
		runs := []removedRun{}
		for _, r := range removed {
			runs = append(runs, removedRun{Name: r.Record.Name, RunID: r.Record.RunID, Kind: r.Record.Kind, State: r.Record.State, EndedAt: r.Record.UpdatedAt, Files: r.Files})
		}
		return printJSON(e, map[string]any{"schema_version": 1, "dry_run": dry, "removed": runs})
	}
	verb := "removed"
	if dry {
		verb = "would remove"
	}
	for _, r := range removed {
		fmt.Fprintf(e.stdout, "%s %s run %s (ended %s, %d files)\n", verb, r.Record.Name, shortRun(r.Record.RunID), localTime(r.Record.UpdatedAt), len(r.Files))
	}
	return nil
}

// shortRun is a run id as tables show it: its first 12 characters.
func shortRun(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return or(id, "-")
}
