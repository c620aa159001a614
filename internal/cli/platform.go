package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// gateCommands makes every command not in supportedHere fail with "not
// supported on <system> yet": exit 125 for run and exec (which exit like
// a run), 1 for the others. Where supportedHere is nil every command is
// left as it is.
func gateCommands(root *cobra.Command) {
	if supportedHere == nil {
		return
	}
	for _, c := range root.Commands() {
		if supportedHere[c.Name()] {
			continue
		}
		code := ExitFailure
		if c.Name() == "exec" || c.Name() == "run" {
			code = ExitTether
		}
		name := c.Name()
		c.Args = cobra.ArbitraryArgs
		c.PreRunE, c.PersistentPreRunE = nil, nil
		c.RunE = func(*cobra.Command, []string) error {
			return exit(code, fmt.Errorf("tether %s: not supported on %s yet (%s)", name, systemName, supportedWhat))
		}
		c.Run = nil
	}
}
