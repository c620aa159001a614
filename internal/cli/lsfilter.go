package cli

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// lsFilter is tether ls --filter: per key, the values any of which may
// match; every key given must match.
type lsFilter map[string][]string

// filterKeys are the keys --filter takes.
var filterKeys = []string{"state", "name", "owner", "profile", "pool", "mechanism"}

// filterStates are the values state= takes: the states, and the groups
// live and ended.
var filterStates = []string{
	registry.StateStarting, registry.StateRunning, registry.StateStopping, "unsupervised",
	registry.StateStopped, registry.StateFailed, "live", "ended",
}

// parseFilters parses --filter KEY=VALUE flags.
func parseFilters(flags []string) (lsFilter, error) {
	f := lsFilter{}
	for _, kv := range flags {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok || v == "":
			return nil, fmt.Errorf("--filter %q: want KEY=VALUE, KEY one of %s", kv, strings.Join(filterKeys, ", "))
		case !slices.Contains(filterKeys, k):
			return nil, fmt.Errorf("--filter %q: no key %q; the keys are %s", kv, k, strings.Join(filterKeys, ", "))
		case k == "state" && !slices.Contains(filterStates, v):
			return nil, fmt.Errorf("--filter %q: no state %q; the states are %s", kv, v, strings.Join(filterStates, ", "))
		case k == "name":
			if _, err := path.Match(v, ""); err != nil {
				return nil, fmt.Errorf("--filter %q: bad pattern: %v", kv, err)
			}
		}
		f[k] = append(f[k], v)
	}
	return f, nil
}

// wantsEnded reports whether a state filter may match ended sessions,
// which are then listed as with --all.
func (f lsFilter) wantsEnded() bool {
	for _, v := range f["state"] {
		if v == registry.StateStopped || v == registry.StateFailed || v == "ended" {
			return true
		}
	}
	return false
}

// keep returns the sessions of ss that match f.
func (f lsFilter) keep(ss []session.Status) []session.Status {
	if len(f) == 0 {
		return ss
	}
	var out []session.Status
	for _, s := range ss {
		if f.match(s) {
			out = append(out, s)
		}
	}
	return out
}

func (f lsFilter) match(s session.Status) bool {
	for k, vs := range f {
		if !slices.ContainsFunc(vs, func(v string) bool { return matchOne(s, k, v) }) {
			return false
		}
	}
	return true
}

func matchOne(s session.Status, k, v string) bool {
	switch k {
	case "state":
		switch v {
		case "live":
			return s.Live()
		case "ended":
			return !s.Live()
		}
		return s.State == v
	case "name":
		ok, _ := path.Match(v, s.Name)
		return ok
	case "owner":
		return s.Owner == v
	case "profile":
		return s.Profile == v
	case "pool":
		return s.Pool == v
	case "mechanism":
		return s.Mechanism == v
	}
	return false
}
