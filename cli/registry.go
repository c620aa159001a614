package cli

import (
	"encoding/json"
	"fmt"

	"github.com/tether-run/tether/registry"
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
