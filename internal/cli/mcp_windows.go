package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// execInPlace runs prog on this process's stdio and returns its exit
// status: Windows cannot replace a process's image.
func execInPlace(prog string, env []string) int {
	cmd := exec.Command(prog)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env = os.Stdin, os.Stdout, os.Stderr, env
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode()
	case err != nil:
		fmt.Fprintf(os.Stderr, "tether mcp: %s: %v\n", prog, err)
		return ExitFailure
	}
	return 0
}
