//go:build linux || windows || darwin

package sessionctl

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// MaxSpec bounds spec.json: the command's argv and environment, which the
// kernel bounds far below this.
const MaxSpec = 4 << 20

// ReadSpec reads the spec Start wrote into the session's runtime dir,
// through the registry's checks (ours, a regular file, not a symlink,
// bounded): a FIFO or a link planted there is refused, not followed.
func ReadSpec(reg *store.Registry, rec *registry.Record) (*Spec, error) {
	if err := reg.CheckDir(rec.RuntimeDir); err != nil {
		return nil, err
	}
	b, err := reg.ReadFile(filepath.Join(rec.RuntimeDir, "spec.json"), MaxSpec)
	if err != nil {
		return nil, err
	}
	s, err := DecodeSpec(b, rec.Name)
	if err != nil {
		return nil, registry.Errorf(rec.Name, nil, "bad spec.json in its runtime dir: %v", err)
	}
	return s, nil
}

// DecodeSpec decodes spec.json and checks what the supervisor relies on:
// it is this session's, has a command, and every option is one Start
// could have written. A spec is input like any file (issue 15): the
// supervisor must refuse one it cannot run as written, not guess.
func DecodeSpec(b []byte, name string) (*Spec, error) {
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if s.Name != name {
		bad("name %q, want %q", s.Name, name)
	}
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		bad("no command")
	}
	if s.Until != UntilMainExit && s.Until != UntilEmpty {
		bad("until %q", s.Until)
	}
	switch s.Profile {
	case "", "tmux", "playwright":
	default:
		bad("profile %q", s.Profile)
	}
	if s.TTL < 0 || s.KillWait < 0 || s.LogMax < 0 || s.LogKeep < 0 {
		bad("a negative ttl, kill wait or log bound")
	}
	if s.StopSignal != "" && SignalNum(s.StopSignal) == 0 {
		bad("stop signal %q", s.StopSignal)
	}
	if s.Max < 0 || s.ReadyTimeout < 0 {
		bad("a negative max or ready timeout")
	}
	if s.Pool != "" && registry.CheckPool(s.Pool) != nil {
		bad("pool %q", s.Pool)
	}
	if err := s.Limits.Validate(); err != nil {
		errs = append(errs, err)
	}
	return &s, errors.Join(errs...)
}
