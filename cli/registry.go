package cli

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// openRegistry opens this user's state directory.
func openRegistry(e *env) (*registry.Registry, error) {
	dir, err := registry.DefaultDir(e.getenv)
	if err != nil {
		return nil, err
	}
	return registry.Open(dir)
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
// code is 2 for a bad name or option, the caller's mistake, else 1.
func sessionExit(name string, err error) error {
	var re *registry.Error
	if name != "" && !errors.As(err, &re) && !errors.Is(err, session.ErrBadOptions) {
		err = fmt.Errorf("session %q: %w", name, err)
	}
	if errors.Is(err, registry.ErrBadName) || errors.Is(err, session.ErrBadOptions) {
		return exit(ExitUsage, err)
	}
	return exit(ExitFailure, err)
}
