//go:build linux || windows || darwin

package reap

import "github.com/tether-run/tether/internal/store"

// Record reaps the one record name as Run would, and returns what it
// found and did: a record whose supervisor is provably dead is stopped
// through what its identity proves (its leaf held anew, or its main
// process) and ended, with a receipt (Action.Receipt) where a stop was
// made; one whose supervisor lives is left alone (Class Supervised). It
// is how `tether stop` stops a session whose supervisor was killed.
func Record(reg *store.Registry, name string, o Options) Action {
	_, o = newReport(o)
	a, rec := classifyOne(reg, name, o)
	if (rec != nil || a.Class == Corrupt) && a.Class != Supervised && !o.DryRun {
		actOne(reg, rec, &a, o)
	}
	return a
}
