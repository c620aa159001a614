package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// runRecords is false on Windows: a run's Job Object dies with tether
// (KILL_ON_JOB_CLOSE), so there is nothing for reap to recover, and the
// registry is not implemented there yet.
const runRecords = false

// supportedHere are the commands that work on Windows so far (issue 14);
// the rest refuse with a clear message rather than act on Linux-only
// machinery.
var supportedHere = map[string]bool{
	"run": true, "start": true, "ls": true, "status": true, "stop": true, "wait": true, "reap": true, "env": true,
	"completion": true, "help": true,
}

// gateCommands makes every command not yet supported on this system fail
// with "not supported on Windows yet": exit 125 for exec (which exits like
// run), 1 for the others.
func gateCommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		if supportedHere[c.Name()] {
			continue
		}
		code := ExitFailure
		if c.Name() == "exec" {
			code = ExitTether
		}
		name := c.Name()
		c.Args = cobra.ArbitraryArgs
		c.PreRunE, c.PersistentPreRunE = nil, nil
		c.RunE = func(*cobra.Command, []string) error {
			return exit(code, fmt.Errorf("tether %s: not supported on Windows yet (tether run is)", name))
		}
		c.Run = nil
	}
}
