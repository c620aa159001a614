package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// statusOptions is `tether status` as its flags and argument resolved it.
type statusOptions struct {
	name   string
	asJSON bool
	lines  int // of the log shown (-n)
}

func newStatusCmd(e *env) *cobra.Command { return newStatusCmdRun(e, runStatus) }

// newStatusCmdRun is newStatusCmd with run called on the parsed options.
func newStatusCmdRun(e *env, run func(*env, *statusOptions) error) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use:   "status NAME [--json]",
		Short: "Show one session: its state, processes and how it ended",
		Long: `Show one session, as systemctl status shows a unit: its state, command,
owner, main pid, age, containment, resources, runtime dir (or that it was
removed), its processes as a tree, for an ended session how it ended and
where its receipt is, and the last lines of its log (-n). --json prints the same as one JSON document
(schema in docs/sessions.md: the record's fields, then what is true now).`,
		Example: `  tether status web
  tether status web --json | jq .processes`,
		Args:              namedArgs(1, cobra.ExactArgs(1)),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return run(e, &o)
		},
	}
	cmd.Flags().BoolVar(&o.asJSON, "json", false, "print one JSON document")
	intVarP(cmd.Flags(), &o.lines, "lines", "n", 10, "show this many of the log's last lines (0: none; not in --json: see tether logs --json)")
	return cmd
}

// runStatus prints o's session as its record and the system show it,
// with the last lines of its log.
func runStatus(e *env, o *statusOptions) error {
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	s, err := client.Status(o.name)
	if err != nil {
		return sessionExit(o.name, err)
	}
	if o.asJSON {
		return printJSON(e, s)
	}
	printStatus(e.stdout, s, verdict(client, s.Record))
	if o.lines > 0 {
		// The tail as tether logs --tail prints it, gaps noted.
		var tail bytes.Buffer
		if err := client.Logs(context.Background(), s.Record.Name, &tail, session.LogOptions{Tail: o.lines, Timestamps: true, Notes: &tail}); err == nil && tail.Len() > 0 {
			fmt.Fprintf(e.stdout, "log (last %d lines):\n", o.lines)
			for _, l := range strings.SplitAfter(strings.TrimSuffix(tail.String(), "\n"), "\n") {
				fmt.Fprintf(e.stdout, "  %s", strings.TrimSuffix(l, "\n")+"\n")
			}
		}
	}
	return nil
}

// localTime is a time as human output shows it: local, with its date and
// zone (JSON has RFC 3339).
func localTime(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") }

// verdict is what rec's receipt says of the stop, for status: "", or
// whether it was confirmed. It is read as every receipt is
// (Client.Receipt): a FIFO planted in its place is not waited on.
func verdict(client *session.Client, rec *registry.Record) string {
	if rec.Receipt == "" {
		return ""
	}
	r, err := client.Receipt(rec)
	switch {
	case err != nil:
		return " (unreadable: " + err.Error() + ")"
	case r.StopConfirmed:
		return " (stop confirmed)"
	}
	return " (stop NOT confirmed: its evidence says why)"
}

func printStatus(w io.Writer, s session.Status, verdict string) {
	fmt.Fprintf(w, "name:       %s\nrun:        %s\nstate:      %s\ncommand:    %q\n", s.Name, or(s.RunID, "-"), stateText(s), s.Argv)
	if s.MainPID > 0 {
		fmt.Fprintf(w, "main pid:   %d\n", s.MainPID)
	}
	fmt.Fprintf(w, "owner:      %s", s.Owner)
	if s.OwnerAlive != nil {
		fmt.Fprintf(w, " (alive: %t)", *s.OwnerAlive)
	}
	fmt.Fprintf(w, "\nstarted:    %s (%s ago)\n", localTime(s.CreatedAt), (time.Duration(s.AgeMS) * time.Millisecond).Round(time.Second))
	fmt.Fprintf(w, "until:      %s\n", or(s.Until, "main-exit"))
	if !s.ExpiresAt.IsZero() {
		fmt.Fprintf(w, "ttl:        ends at %s", localTime(s.ExpiresAt))
		if s.Live() {
			fmt.Fprintf(w, " (%s left)", max(time.Until(s.ExpiresAt), 0).Round(time.Second))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "signal:     %s (the stop's first)\n", or(s.StopSignal, "SIGTERM"))
	if s.Pool != "" {
		fmt.Fprintf(w, "pool:       %s\n", s.Pool)
	}
	fmt.Fprintf(w, "mechanism:  %s\ncgroup:     %s\n", s.Mechanism, or(s.Cgroup, "none"))
	if s.Live() {
		mem := "-"
		if s.MemoryBytes >= 0 {
			mem = humanBytes(s.MemoryBytes) + " (" + s.MemorySource + ")"
		}
		fmt.Fprintf(w, "procs:      %d\nmemory:     %s\ncpu:        %.2fs\n", s.Procs, mem, float64(s.CPUUsec)/1e6)
	}
	rt := s.RuntimeDir
	if !s.RuntimeDirExists {
		rt += " (removed)"
	}
	fmt.Fprintf(w, "runtime:    %s\nlog:        %s\n", rt, s.Log)
	if s.StopReason != "" {
		// A session reap finished after its supervisor died has
		// neither an exit nor a receipt.
		fmt.Fprintf(w, "stopped:    %s", s.StopReason)
		if s.Exit != nil {
			fmt.Fprintf(w, ", exit %d", s.Exit.Code)
		}
		if !s.EndedAt.IsZero() {
			fmt.Fprintf(w, ", at %s", localTime(s.EndedAt))
		}
		fmt.Fprintf(w, "\nreceipt:    %s%s\n", or(s.Receipt, "none"), verdict)
	}
	if l := s.OutputLoss; l != nil {
		fmt.Fprintf(w, "output lost: %d bytes (%d lines) since %s: %s\n", l.DroppedBytes, l.DroppedLines, l.FirstAt.Format(time.RFC3339), l.Error)
	}
	for _, c := range s.Caveats {
		fmt.Fprintf(w, "caveat:     %s\n", c)
	}
	if s.Error != "" {
		fmt.Fprintf(w, "error:      %s\n", s.Error)
	}
	if len(s.Processes) > 0 {
		fmt.Fprintf(w, "processes:\n")
		printTree(w, s.Processes)
	}
}

// printTree draws the members as a tree by parent, as systemctl status
// does: a member whose parent is not a member is a root (the main
// process, and daemons reparented to the supervisor).
func printTree(w io.Writer, procs []session.Proc) {
	in := map[int]bool{}
	kids := map[int][]session.Proc{}
	for _, p := range procs {
		in[p.PID] = true
	}
	var roots []session.Proc
	for _, p := range procs {
		if in[p.PPID] && p.PPID != p.PID {
			kids[p.PPID] = append(kids[p.PPID], p)
		} else {
			roots = append(roots, p)
		}
	}
	byPID := func(ps []session.Proc) { sort.Slice(ps, func(i, j int) bool { return ps[i].PID < ps[j].PID }) }
	var walk func(ps []session.Proc, prefix string)
	walk = func(ps []session.Proc, prefix string) {
		byPID(ps)
		for i, p := range ps {
			branch, next := "├─", "│ "
			if i == len(ps)-1 {
				branch, next = "└─", "  "
			}
			fmt.Fprintf(w, "  %s%s%d %s\n", prefix, branch, p.PID, commandText(p.Argv, 100))
			walk(kids[p.PID], prefix+next)
		}
	}
	walk(roots, "")
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
