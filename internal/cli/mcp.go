package cli

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/internal/sibling"
)

// mcpProgram is the program `tether mcp` runs: cmd/tether-mcp, which
// holds the MCP SDK (linked into tether, its initialization alone cost
// every tether run 0.9 ms).
const mcpProgram = "tether-mcp"

// mcpSupervisorEnv is mcpserver.SupervisorEnv (not imported: that would
// link the SDK).
const mcpSupervisorEnv = "TETHER_SUPERVISOR"

// mcpOptions is `tether mcp` as its flags resolved it: it has none.
type mcpOptions struct{}

func newMCPCmd(e *env) *cobra.Command { return newMCPCmdRun(e, runMCP) }

// newMCPCmdRun is newMCPCmd with run called on the parsed options.
func newMCPCmdRun(e *env, run func(*env, *mcpOptions) error) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve tether to an agent as MCP tools over stdio",
		Long: `Serve tether's tools to an agent over the Model Context Protocol, on
stdin and stdout: run (a command contained, waited for), start (a session,
returned once ready), list, status, logs, exec, stop (with the receipt's
summary) and wait. Each call returns within 50 s and 32 KiB of output.

Sessions started through it belong to this server: when its client goes
away (stdin closed, the server killed) they are stopped, with receipts —
unless started with keep. Register it with an agent as the command
"tether mcp" (docs/agents.md in tether's source).

It runs tether-mcp, installed beside tether (go install
github.com/tether-run/tether/cmd/tether-mcp@VERSION), in its place.`,
		Example: `  claude mcp add tether -- tether mcp`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(e, &mcpOptions{})
		},
	}
}

// runMCP runs tether-mcp in tether's place, telling it where tether is.
func runMCP(e *env, o *mcpOptions) error {
	self, err := os.Executable()
	if err != nil {
		return exit(ExitFailure, err)
	}
	prog, err := findMCP(self)
	if err != nil {
		return exit(ExitFailure, err)
	}
	env := append(os.Environ(), mcpSupervisorEnv+"="+self)
	return exit(execInPlace(prog, env), nil)
}

// findMCP finds tether-mcp beside tether (self), else on PATH.
func findMCP(self string) (string, error) {
	if p, ok := sibling.Path(mcpProgram); ok {
		return p, nil
	}
	if p, err := exec.LookPath(mcpProgram); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("tether mcp runs %s, which is neither beside %s nor on PATH: install it (go install github.com/tether-run/tether/cmd/tether-mcp@latest)", mcpProgram, self)
}
