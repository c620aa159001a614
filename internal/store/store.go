// Package store is one user's state directory on disk: the records of
// runs and sessions (registry.Record), their runtime dirs, logs and
// receipts — created, replaced and removed relative to directories opened
// and checked once (0700 on Unix, protected DACLs on Windows), so that
// nothing planted there (a symlink, a FIFO, another user's file) is
// followed, waited on or trusted.
//
// Layout under the state directory (all 0700, owned by the user, never a
// symlink, checked on every open):
//
//	records/NAME.json          the record of a session or run that may have processes
//	ended/NAME.json            the record once it has ended (history: not
//	                           scanned by reap or ls unless asked)
//	ended/NAME@RUNID.json      an earlier run of NAME (a name used again)
//	s/NAME/                    the session's runtime dir: tmp/, sock/, spec.json
//	logs/NAME@RUNID.log        a run's output (bounded: rotated to .log.1, .2, …)
//	receipts/NAME@RUNID.json   a run's stop receipt
//	configs/NAME@RUNID.json    what an ended run was started with (inspect)
//
// A name is claimed by creating s/NAME exclusively; it is free again once
// the session is stopped and its runtime dir removed. Each run keeps its
// own files until tether rm or prune removes them, or the retention bound
// (Retention, applied as sessions end) does.
package store

import (
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// MarkerEnv carries the fallback group's random marker (Record.Marker)
// into every member's environment: contain sets it, reap finds a dead
// owner's members by it, and a session's exec drops an outer one.
const MarkerEnv = "TETHER_GROUP_MARKER"

// SetContainment records in rec where a run's receipt says its group is
// — the mechanism, the leaf and its id, the v1 leaves of its limits — so
// that reap can find it if its supervisor dies.
func SetContainment(rec *registry.Record, rc *receipt.Receipt) {
	rec.Mechanism = string(rc.Mechanism)
	if rc.Cgroup != nil {
		rec.Cgroup, rec.CgroupID = rc.Cgroup.Path, rc.Cgroup.ID
	}
	if rc.Limits != nil {
		rec.V1Cgroups = rc.Limits.V1Leaves
	}
}
