package cli

import (
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
)

func newLogsCmd(e *env) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs NAME [-f]",
		Short: "Print a session's output (stdout and stderr, interleaved)",
		Long: `Print what the session's command wrote. The log is bounded: past its size
it rotates once, and both parts are printed. With -f, keep printing new
output until the session has stopped.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, err := openRegistry(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			rec, err := reg.Read(args[0])
			if err != nil {
				return exit(ExitFailure, err)
			}
			path := reg.LogPath(rec.Name)
			if old, err := os.Open(path + ".1"); err == nil {
				io.Copy(e.stdout, old)
				old.Close()
			}
			f, err := os.Open(path)
			if err != nil {
				return exit(ExitFailure, err)
			}
			defer f.Close()
			for {
				if _, err := io.Copy(e.stdout, f); err != nil {
					return exit(ExitFailure, err)
				}
				if !follow {
					return nil
				}
				if r, err := reg.Read(rec.Name); err != nil || !r.Live() {
					io.Copy(e.stdout, f)
					return nil
				}
				time.Sleep(200 * time.Millisecond)
			}
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the log until the session stops")
	return cmd
}
