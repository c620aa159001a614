//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// execInPlace replaces this process with prog: the MCP client's child,
// whose pid owns the sessions it starts, is the server itself. It
// returns only on failure.
func execInPlace(prog string, env []string) int {
	err := syscall.Exec(prog, []string{prog}, env)
	fmt.Fprintf(os.Stderr, "tether mcp: %s: %v\n", prog, err)
	return ExitFailure
}
