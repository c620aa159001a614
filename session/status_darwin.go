package session

import "github.com/tether-run/tether/registry"

// groupFacts adds nothing on macOS: a session's members are known to its
// supervisor's walks of the process table, not to another process.
func groupFacts(*registry.Record, *Status) []int { return nil }

// describe lists nothing on macOS.
func describe([]int) []Proc { return nil }

// Inside reports false on macOS: membership cannot be proven from outside.
func Inside(*registry.Record) bool { return false }
