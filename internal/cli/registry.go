package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// openRegistry opens this user's state directory.
func openRegistry(e *env) (*store.Registry, error) {
	dir, err := store.DefaultDir(e.getenv)
	if err != nil {
		return nil, err
	}
	return store.Open(dir)
}

// openClient opens the session client of the default registry; its
// supervisors are this binary (tether's main calls
// session.MaybeSupervise).
func openClient(e *env) (*session.Client, error) {
	dir, err := store.DefaultDir(e.getenv)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c, err := session.Open(dir)
	if err != nil {
		return nil, err
	}
	c.Supervisor = exe
	return c, nil
}

// printJSON writes v as one indented JSON document.
func printJSON(e *env, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

// sessionExit is the exit error for err about the session name: its
// message names the session (registry and session errors do already:
// `session "x": not found`; a bad option names the flag instead), and its
// code is 2 for a bad name or option or a command line too long to
// record, the caller's mistake, else 1.
func sessionExit(name string, err error) error {
	var re *registry.Error
	if name != "" && !errors.As(err, &re) && !errors.Is(err, session.ErrBadOptions) {
		err = fmt.Errorf("session %q: %w", name, err)
	}
	if errors.Is(err, registry.ErrBadName) || errors.Is(err, session.ErrBadOptions) || errors.Is(err, registry.ErrTooLarge) {
		return exit(ExitUsage, err)
	}
	return exit(ExitFailure, err)
}

// namedArgs is the Args check of a command whose first n arguments (every
// argument, for n < 0) are session names: after shape checks it applies
// the name policy (registry.CheckName) before anything is opened or
// created, so a name outside it is a usage error naming it.
func namedArgs(n int, shape cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := shape(cmd, args); err != nil {
			want := "session names"
			if n == 1 {
				want = "one session NAME"
			}
			return fmt.Errorf("want %s, got %d arguments (usage: %s)", want, len(args), cmd.UseLine())
		}
		for i, a := range args {
			if n >= 0 && i >= n {
				break
			}
			if err := registry.CheckName(a); err != nil {
				return err
			}
		}
		return nil
	}
}

// checkStartNames applies the name policy to what tether start is given
// as names: --name, --pool, and the session of --owner session:NAME.
func checkStartNames(name, pool, owner string) error {
	if name != "" {
		if err := registry.CheckName(name); err != nil {
			return err
		}
	}
	if pool != "" {
		if err := registry.CheckPool(pool); err != nil {
			return err
		}
	}
	if o, ok := strings.CutPrefix(owner, "session:"); ok {
		if err := registry.CheckName(o); err != nil {
			return fmt.Errorf("--owner %q: %w", owner, err)
		}
	}
	return nil
}
