// Command tether-mcp serves tether to agents as tools over the Model
// Context Protocol (stdio); `tether mcp` runs it. It is a program of its
// own so that the MCP SDK is not linked into tether. See docs/agents.md.
package main

import (
	"os"

	"github.com/tether-run/tether/internal/mcpserver"
)

func main() { os.Exit(mcpserver.Main()) }
