package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

func newLsCmd(e *env) *cobra.Command { return newLsCmdRun(e, runLs) }

// newLsCmdRun is newLsCmd with run called on the parsed options.
func newLsCmdRun(e *env, run func(*env, *lsOptions) error) *cobra.Command {
	var o lsOptions
	var filters []string
	cmd := &cobra.Command{
		Use:   "ls [--json | -q | --format TEMPLATE] [-a] [--filter KEY=VALUE]...",
		Short: "List this user's sessions",
		Long: `List sessions: name, state (starting, running, stopping, unsupervised; for
ended ones how and when they ended, "exited (3) 5s ago"), the main
process's pid, owner and whether it is alive, age, process count, memory
(the leaf's memory.current, else the v1 memory leaf of a session with
limits, else the members' summed PSS: --json says which), CPU, the
containment mechanism, and the command.

Run from inside a session, it shows that session and the sessions it owns;
-a (--all) shows every session of this user, stopped ones included, and
every earlier run a name used again keeps, each with its run id (RUN; tether
logs --run, inspect --run, rm --run take it or a prefix of it).

--filter KEY=VALUE keeps the sessions that match (repeatable: values of one
key are alternatives, different keys must all match): state (starting,
running, stopping, unsupervised, stopped, failed; live or ended for the
groups; a state filter looks at ended sessions too, as --all does), name
(a shell pattern: web-*), owner, profile, pool, mechanism.

-q prints names only, one a line. --format TEMPLATE prints one line per
session, its {{.field}} placeholders (Go template syntax, fields only)
filled from --json's sessions, by their JSON names:
'{{.name}}\t{{.state}}\t{{.main_pid}}' (\t and \n as written are a tab
and a newline, as docker takes them); --format json prints
each session as one line of JSON.`,
		Example: `  tether ls
  tether ls -q --filter state=running | xargs -r tether stop
  tether ls --all --filter 'name=web-*' --format '{{.name}}\t{{.state}}\t{{.owner}}'
  tether ls --all --json | jq -r '.sessions[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.filter, err = parseFilters(filters); err != nil {
				return exit(ExitUsage, err)
			}
			if o.format != "" && o.format != "json" {
				if o.line, err = parseFormat(o.format); err != nil {
					return exit(ExitUsage, fmt.Errorf("--format: %v", err))
				}
			}
			return run(e, &o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.json, "json", false, "print one JSON document")
	fl.BoolVarP(&o.all, "all", "a", false, "every session of this user, stopped ones and earlier runs included")
	fl.BoolVarP(&o.quiet, "quiet", "q", false, "print names only, one a line")
	fl.StringVar(&o.format, "format", "", "print each session by a `TEMPLATE` of --json's fields ({{.name}} {{.exit.code}}), or json for JSON Lines")
	fl.StringArrayVar(&filters, "filter", nil, "keep sessions matching `KEY=VALUE` (state, name, owner, profile, pool, mechanism; repeatable)")
	cmd.MarkFlagsMutuallyExclusive("json", "quiet", "format")
	cmd.RegisterFlagCompletionFunc("filter", cobra.FixedCompletions([]cobra.Completion{
		"state=running", "state=live", "state=ended", "state=stopped", "state=failed", "state=unsupervised",
		"name=", "owner=", "profile=tmux", "profile=playwright", "pool=", "mechanism=cgroup", "mechanism=fallback",
	}, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions([]cobra.Completion{
		"json", "{{.name}}", "{{.name}}\t{{.state}}",
	}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// lsOptions is `tether ls` as its flags resolved it.
type lsOptions struct {
	json, all, quiet bool
	format           string
	line             *lineFormat // --format TEMPLATE parsed; nil for json
	filter           lsFilter
}

// runLs lists the sessions o selects.
func runLs(e *env, o *lsOptions) error {
	f := o.filter
	reg, err := openRegistry(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	all := o.all || f.wantsEnded()
	list := reg.ListLive
	if all {
		list = reg.History
	}
	recs, errs := list()
	for _, err := range errs {
		e.warnf("%v", err)
	}
	recs = selectSessions(e, reg, recs, all)
	out := f.keep(session.StatusOfAll(recs))
	for i, s := range out {
		// A name's earlier runs (-a) share its runtime dir's path with
		// the run that now holds it.
		if s.RuntimeDirExists && !s.Live() && !reg.Current(s.Record) {
			out[i].RuntimeDirExists = false
		}
	}
	switch {
	case o.json:
		return printJSON(e, map[string]any{"schema_version": 1, "sessions": out})
	case o.quiet:
		buf := bufio.NewWriter(e.stdout)
		seen := map[string]bool{} // -a lists a name's earlier runs too
		for _, s := range out {
			if !seen[s.Name] {
				seen[s.Name] = true
				fmt.Fprintln(buf, s.Name)
			}
		}
		return buf.Flush()
	case o.format != "":
		return printFormat(e, out, o.line)
	}
	printTable(e, out, all)
	return nil
}

// printFormat prints each session as a line of JSON (f nil) or by f.
func printFormat(e *env, ss []session.Status, f *lineFormat) error {
	buf := bufio.NewWriter(e.stdout)
	defer buf.Flush()
	for _, s := range ss {
		var b []byte
		var err error
		if f == nil {
			b, err = json.Marshal(s)
		} else {
			b, err = f.line(s)
		}
		if err != nil {
			return exit(ExitFailure, err)
		}
		buf.Write(append(b, '\n'))
	}
	return nil
}

// selectSessions keeps the caller's family when it runs inside a session,
// else the live sessions; all keeps everything.
func selectSessions(e *env, reg *store.Registry, recs []*registry.Record, all bool) []*registry.Record {
	if all {
		return recs
	}
	if name := e.getenv("TETHER_SESSION"); name != "" {
		if self, err := reg.Read(name); err == nil && session.Inside(self) {
			if c, err := session.Open(reg.Dir); err == nil {
				fam, _ := c.Family(name)
				c.Close()
				return append(fam, self)
			}
		}
	}
	var live []*registry.Record
	for _, r := range recs {
		if r.Live() {
			live = append(live, r)
		}
	}
	return live
}

// printTable prints the sessions ss as a table; runs adds each one's run
// id (its first 12 characters, as docker shows a container's), for ls -a.
func printTable(e *env, ss []session.Status, runs bool) {
	buf := bufio.NewWriter(e.stdout)
	defer buf.Flush()
	w := tabwriter.NewWriter(buf, 0, 4, 2, ' ', 0)
	run := func(s string) string { return "" }
	if runs {
		run = func(s string) string { return s + "\t" }
	}
	fmt.Fprintln(w, "NAME\t"+run("RUN")+"STATE\tPID\tOWNER\tAGE\tPROCS\tMEM\tCPU\tMECH\tCOMMAND")
	for _, s := range ss {
		owner := s.Owner
		if s.OwnerAlive != nil {
			if *s.OwnerAlive {
				owner += " (alive)"
			} else {
				owner += " (dead)"
			}
		}
		mem, pid, procs, cpu := "-", "-", "-", "-"
		if s.MemoryBytes >= 0 {
			mem = humanBytes(s.MemoryBytes)
		}
		if s.MainPID > 0 {
			pid = strconv.Itoa(s.MainPID)
		}
		if s.Live() {
			procs, cpu = strconv.Itoa(s.Procs), fmt.Sprintf("%.1fs", float64(s.CPUUsec)/1e6)
		}
		fmt.Fprintf(w, "%s\t%s%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, run(shortRun(s.RunID)), stateText(s), pid, owner,
			short(time.Duration(s.AgeMS)*time.Millisecond), procs, mem, cpu, s.Mechanism, commandText(s.Argv, 48))
	}
	w.Flush()
}

// stateText is the state, and for an ended session how and when it
// ended, as docker ps -a says "Exited (3) 5 seconds ago": "exited (3) 5s
// ago" when the main process's exit ended it, "stopped (ttl, 143) 2m ago"
// when something else did.
func stateText(s session.Status) string {
	if s.Live() || s.EndedAt.IsZero() {
		return s.State
	}
	ago := " " + short(time.Since(s.EndedAt)) + " ago"
	code := "?"
	if s.Exit != nil {
		code = strconv.Itoa(s.Exit.Code)
	}
	switch {
	case s.State == registry.StateFailed:
		return "failed (" + code + ")" + ago
	case s.StopReason == "main-exit" || s.StopReason == "empty":
		return "exited (" + code + ")" + ago
	case s.StopReason != "":
		return "stopped (" + s.StopReason + ", " + code + ")" + ago
	}
	return s.State + ago
}

// short renders d in its largest whole unit: 42s, 5m, 3h, 2d.
func short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// commandText joins argv for a table cell, on one line, cut to max runes.
func commandText(argv []string, max int) string {
	s := strings.Join(argv, " ")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || (r >= 0x7f && r <= 0x9f) { // C0, DEL and C1: no terminal control from a command line
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d", n)
}
