// Package oldkernel lets tests take the paths tether uses on older
// kernels on a new one: membership by /proc/PID/cgroup where
// PIDFD_GET_INFO is missing (before Linux 6.13), and freeze+SIGKILL where
// cgroup.kill is missing (before 5.14). identity and the stop protocol
// consult it; only tests (and test binaries built with the crashpoints
// tag, through $TETHER_TEST_FORCE) set it. Being internal, it is no part
// of tether's API.
package oldkernel

import "sync/atomic"

var noPidfdInfo, noCgroupKill atomic.Bool

// NoPidfdInfo reports whether the kernel is to be treated as lacking the
// PIDFD_GET_INFO cgroup id.
func NoPidfdInfo() bool { return noPidfdInfo.Load() }

// NoCgroupKill reports whether the kernel is to be treated as lacking
// cgroup.kill.
func NoCgroupKill() bool { return noCgroupKill.Load() }

// Force sets both until undo is called. For tests only.
func Force(pidfdInfoMissing, cgroupKillMissing bool) (undo func()) {
	a, b := noPidfdInfo.Swap(pidfdInfoMissing), noCgroupKill.Swap(cgroupKillMissing)
	return func() { noPidfdInfo.Store(a); noCgroupKill.Store(b) }
}
