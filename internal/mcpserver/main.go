package mcpserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// SupervisorEnv names the tether binary whose supervisors run the
// sessions the server starts; `tether mcp` sets it to itself. Unset: the
// tether beside this program, else tether on PATH.
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
	dir, err := registry.DefaultDir(os.Getenv)
	if err != nil {
		return fail(err)
	}
	reg, err := registry.Open(dir)
	if err != nil {
		return fail(err)
	}
	sup, err := supervisor()
	if err != nil {
		return fail(err)
	}
	os.Unsetenv(SupervisorEnv) // not the commands' business
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, &session.Client{Registry: reg, Supervisor: sup}, os.Stdin, os.Stdout); err != nil {
		return fail(err)
	}
	return 0
}

// supervisor finds the tether binary that supervises sessions.
func supervisor() (string, error) {
	if p := os.Getenv(SupervisorEnv); p != "" {
		return p, nil
	}
	name := "tether"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), name); exists(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("tether"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("no tether binary beside %s or on PATH to supervise sessions (or set %s)", os.Args[0], SupervisorEnv)
}

func exists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
