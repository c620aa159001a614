package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/session"
)

func newStopCmd(e *env) *cobra.Command {
	var all, asJSON bool
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "stop NAME... | --all",
		Short: "Stop sessions with the stop protocol and print their receipts",
		Long: `Stop each named session (or, with --all, every live session of this user):
its supervisor stops the sessions it owns first, then runs the stop protocol
(SIGTERM, --grace, cgroup.kill, reap), records the receipt and removes the
session's runtime dir. Every session is attempted even when one fails; the
exit status is 1 if any failed, and stderr names each failure.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return exit(ExitUsage, errors.New("give session names or --all, not both or neither"))
			}
			reg, err := openRegistry(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			if all {
				recs, _ := reg.List()
				for _, r := range recs {
					if r.Live() {
						args = append(args, r.Name)
					}
				}
			}
			g := grace
			if cmd.Flags().Changed("grace") && grace == 0 {
				g = -1
			}
			receipts := []*receipt.Receipt{}
			var errs []error
			for _, name := range args {
				r, err := session.Stop(reg, name, g, g+10*time.Minute)
				if err != nil {
					errs = append(errs, fmt.Errorf("stop %s: %w", name, err))
					continue
				}
				receipts = append(receipts, r)
				if !asJSON {
					fmt.Fprintf(e.stdout, "%s\tstopped (%s), confirmed %t\n", name, r.Stop.Reason, r.StopConfirmed)
				}
			}
			if asJSON {
				if err := printJSON(e, map[string]any{"schema_version": 1, "receipts": receipts}); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return exit(ExitFailure, errors.Join(errs...))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "stop every live session of this user")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the receipts as one JSON document")
	cmd.Flags().DurationVar(&grace, "grace", 0, "time members get after SIGTERM (default: the session's own)")
	return cmd
}
