package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/tether-run/tether/session"
)

func newStatusCmd(e *env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status NAME [--json]",
		Short: "Show one session",
		Long: `Show one session: its state, command, owner, age, containment, processes,
CPU, runtime dir and log, and, once it ended, how and with which exit code.
--json prints the whole record as one JSON document.`,
		Example: `  tether status web
  tether status --json web | jq .state`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := openRegistry(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			rec, err := reg.Read(args[0])
			if err != nil {
				return sessionExit(args[0], err)
			}
			s := session.StatusOf(rec)
			if asJSON {
				return printJSON(e, s)
			}
			w := e.stdout
			fmt.Fprintf(w, "name:       %s\nstate:      %s\ncommand:    %q\n", s.Name, s.State, s.Argv)
			fmt.Fprintf(w, "owner:      %s", s.Owner)
			if s.OwnerAlive != nil {
				fmt.Fprintf(w, " (alive: %t)", *s.OwnerAlive)
			}
			fmt.Fprintf(w, "\nage:        %s\nmechanism:  %s\ncgroup:     %s\nprocs:      %d\ncpu:        %.2fs\n",
				(time.Duration(s.AgeMS) * time.Millisecond).Round(time.Second), s.Mechanism, s.Cgroup, s.Procs, float64(s.CPUUsec)/1e6)
			fmt.Fprintf(w, "runtime:    %s\nlog:        %s\n", s.RuntimeDir, s.Log)
			if s.StopReason != "" {
				// A session reap finished after its supervisor died has
				// neither an exit nor a receipt.
				fmt.Fprintf(w, "stopped:    %s", s.StopReason)
				if s.Exit != nil {
					fmt.Fprintf(w, ", exit %d", s.Exit.Code)
				}
				fmt.Fprintf(w, "\nreceipt:    %s\n", or(s.Receipt, "none"))
			}
			if l := s.OutputLoss; l != nil {
				fmt.Fprintf(w, "output lost: %d bytes (%d lines) since %s: %s\n", l.DroppedBytes, l.DroppedLines, l.FirstAt.Format(time.RFC3339), l.Error)
			}
			if s.Error != "" {
				fmt.Fprintf(w, "error:      %s\n", s.Error)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON document")
	return cmd
}

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
