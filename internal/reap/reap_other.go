//go:build !linux && !windows && !darwin

package reap

import "github.com/tether-run/tether/internal/store"

// Run reports nothing on this system: reaping is Linux only for now.
func Run(reg *store.Registry, o Options) *Report {
	return &Report{SchemaVersion: 1, DryRun: o.DryRun, Actions: []Action{}, OrphanLeaves: []OrphanLeaf{}}
}
