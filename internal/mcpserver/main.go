package mcpserver

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tether-run/tether/internal/sibling"
	"github.com/tether-run/tether/session"
)

// SupervisorEnv names the tether binary whose supervisors run the
// sessions the server starts; `tether mcp` sets it to itself. Unset: the
// tether beside this program, else tether on PATH (session.Client's).
const SupervisorEnv = "TETHER_SUPERVISOR"

// Main is the tether-mcp program: it serves the default registry's
// tools on stdin and stdout until the client goes away, and returns the
// exit status. The MCP SDK is linked into this program only, not into
// tether: its packages' initialization alone cost every tether run
// 0.9 ms (GODEBUG=inittrace=1), a third of timeout(1)'s whole run.
func Main() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "tether mcp:", err)
		return 1
	}
	client, err := session.Open("")
	if err != nil {
		return fail(err)
	}
	defer client.Close()
	client.Supervisor = supervisor()
	os.Unsetenv(SupervisorEnv) // not the commands' business
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, client, os.Stdin, os.Stdout); err != nil {
		return fail(err)
	}
	return 0
}

// supervisor is the tether binary that supervises sessions: SupervisorEnv,
// else the tether beside this program; "" leaves it to session.Client
// (tether on PATH).
func supervisor() string {
	if p := os.Getenv(SupervisorEnv); p != "" {
		return p
	}
	if p, ok := sibling.Path("tether"); ok {
		return p
	}
	return ""
}
