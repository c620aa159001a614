package session

import "github.com/tether-run/tether/registry"

// groupFacts adds nothing on Windows yet: the job's accounting is read
// through its handle, which only the supervisor holds (issue 14).
func groupFacts(rec *registry.Record, s *Status) []int { return nil }

// Inside reports false on Windows: membership of a session's job cannot
// be checked from outside it yet.
func Inside(rec *registry.Record) bool { return false }
