package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// rmOptions is `tether rm` as its flags and arguments resolved it.
type rmOptions struct {
	names []string
	force bool
	run   string // one run only (--run)
}

func newRmCmd(e *env) *cobra.Command { return newRmCmdRun(e, runRm) }

// newRmCmdRun is newRmCmd with run called on the parsed options.
func newRmCmdRun(e *env, run func(*env, *rmOptions) error) *cobra.Command {
	var o rmOptions
	cmd := &cobra.Command{
		Use:   "rm [-f] [--run ID] NAME...",
		Short: "Remove ended sessions: their records, logs, receipts and configurations",
		Long: `Remove every ended run of each named session — its record, its log's files,
its receipt and its configuration — or, with --run, that one run (tether ls
-a lists the runs; a prefix of the run id that only one run has will do).

A session that is running is refused, and nothing of it is removed, unless
-f: it is then stopped first, as tether stop stops it (its line is printed),
and removed once its stop is confirmed. A run whose stop was not confirmed
(its runtime dir or cgroup leaf remains) is left for tether reap.

Prints a line per run removed. Exit status: 1 if a name has no session or
anything could not be removed, 2 for a bad name or flag.`,
		Example: `  tether rm web
  tether rm -f web api
  tether rm --run 3f2a9c web`,
		Args:              namedArgs(-1, cobra.MinimumNArgs(1)),
		ValidArgsFunction: completeSessions(e, true, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names = args
			if o.run != "" && len(args) != 1 {
				return exit(ExitUsage, errors.New("--run takes one session name"))
			}
			return run(e, &o)
		},
	}
	cmd.Flags().BoolVarP(&o.force, "force", "f", false, "stop a running session first (the stop protocol, as tether stop), then remove it")
	cmd.Flags().StringVar(&o.run, "run", "", "remove only the run with this run `ID` (or a prefix of it)")
	cmd.RegisterFlagCompletionFunc("run", completeRuns(e))
	return cmd
}

// completeRuns completes --run with the run ids of the session named
// first, newest first, each with its state and when it started.
func completeRuns(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 || registry.CheckName(args[0]) != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		reg, err := openRegistry(e)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		runs, _ := reg.Runs(args[0])
		var out []cobra.Completion
		for _, r := range runs {
			if strings.HasPrefix(r.RunID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(r.RunID, r.State+", started "+localTime(r.CreatedAt)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// runRm removes the ended runs of o's names, stopping running ones first
// with -f, and prints each run removed.
func runRm(e *env, o *rmOptions) error {
	reg, err := openRegistry(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	var errs []error
	targets := map[string][]*registry.Record{}
	var running []string
	for _, name := range o.names {
		runs, err := rmTargets(reg, name, o.run)
		if err != nil {
			errs = append(errs, sessionExit(name, err).(*exitError).err)
			continue
		}
		live := false
		for _, r := range runs {
			live = live || r.Live()
		}
		if live && !o.force {
			errs = append(errs, fmt.Errorf("session %q is running: stop it first (tether stop %s), or remove it with -f", name, name))
			continue
		}
		if live {
			running = append(running, name)
		}
		targets[name] = runs
	}
	if len(running) > 0 {
		// The stop protocol as tether stop runs it; a stop that failed
		// leaves its run live or unconfirmed, which RemoveRun refuses.
		if err := runStop(e, &stopOptions{names: running}); err != nil {
			var ee *exitError
			if errors.As(err, &ee) && ee.err != nil {
				errs = append(errs, ee.err)
			}
		}
	}
	var removed []store.Removed
	for _, name := range o.names {
		for _, r := range targets[name] {
			rm, err := reg.RemoveRun(name, r.RunID)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, rm)
		}
	}
	printRemoved(e, removed, false, false)
	if len(errs) > 0 {
		return exit(ExitFailure, errors.Join(errs...))
	}
	return nil
}

// rmTargets returns the runs of name rm removes: all of them, or the one
// run matches.
func rmTargets(reg *store.Registry, name, run string) ([]*registry.Record, error) {
	if run != "" {
		rec, err := reg.FindRun(name, run)
		if err != nil {
			return nil, err
		}
		return []*registry.Record{rec}, nil
	}
	runs, errs := reg.Runs(name)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(runs) == 0 {
		return nil, registry.Errorf(name, registry.ErrNotFound, "not found")
	}
	return runs, nil
}
