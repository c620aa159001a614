package cli

import (
	"bufio"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

func newLsCmd(e *env) *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "ls [--json] [--all]",
		Short: "List this user's sessions",
		Long: `List sessions: name, state (starting, running, unsupervised, stopped,
failed), owner and whether it is alive, age, process count, memory and CPU
read from the session's leaf, and the containment mechanism.

Run from inside a session, it shows that session and the sessions it owns;
--all shows every session of this user, stopped ones included.`,
		Example: `  tether ls
  tether ls --all --json | jq -r '.sessions[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := openRegistry(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			list := reg.ListLive
			if all {
				list = reg.List
			}
			recs, errs := list()
			for _, err := range errs {
				e.warnf("%v", err)
			}
			recs = selectSessions(e, reg, recs, all)
			out := session.StatusOfAll(recs)
			if asJSON {
				return printJSON(e, map[string]any{"schema_version": 1, "sessions": out})
			}
			printTable(e, out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	cmd.Flags().BoolVar(&all, "all", false, "every session of this user, stopped ones included")
	return cmd
}

// selectSessions keeps the caller's family when it runs inside a session,
// else the live sessions; all keeps everything.
func selectSessions(e *env, reg *registry.Registry, recs []*registry.Record, all bool) []*registry.Record {
	if all {
		return recs
	}
	if name := e.getenv("TETHER_SESSION"); name != "" {
		if self, err := reg.Read(name); err == nil && session.Inside(self) {
			fam := append(session.Family(reg, self.Supervisor), self)
			return fam
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

func printTable(e *env, ss []session.Status) {
	buf := bufio.NewWriter(e.stdout)
	defer buf.Flush()
	w := tabwriter.NewWriter(buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tSTATE\tOWNER\tAGE\tPROCS\tMEM\tCPU\tMECH")
	for _, s := range ss {
		owner := s.Owner
		if s.OwnerAlive != nil {
			if *s.OwnerAlive {
				owner += " (alive)"
			} else {
				owner += " (dead)"
			}
		}
		mem := "-"
		if s.MemoryBytes >= 0 {
			mem = humanBytes(s.MemoryBytes)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%.1fs\t%s\n", s.Name, s.State, owner,
			(time.Duration(s.AgeMS) * time.Millisecond).Round(time.Second), s.Procs, mem, float64(s.CPUUsec)/1e6, s.Mechanism)
	}
	w.Flush()
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
