package cgroup

import "time"

// HasKill reports whether the leaf has cgroup.kill (Linux 5.14+). Without
// it a group is killed by freezing it and signalling each member.
func (l *Leaf) HasKill() bool { return l.Has("cgroup.kill") }

// Freeze writes cgroup.freeze (Linux 5.2+): true asks the kernel to freeze
// every task in the leaf and its descendants, false thaws them. Freezing
// is asynchronous; WaitFrozen waits for it to take effect.
func (l *Leaf) Freeze(on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return l.write("cgroup.freeze", v)
}

// FreezeRequested reports whether cgroup.freeze says 1: someone asked for
// the leaf to be frozen (it may not be frozen yet).
func (l *Leaf) FreezeRequested() (bool, error) {
	b, err := l.read("cgroup.freeze")
	if err != nil {
		return false, err
	}
	return len(b) > 0 && b[0] == '1', nil
}

// WaitFrozen waits up to d for cgroup.events to say "frozen 1" and reports
// whether it did. An empty leaf is frozen at once. Notifications are
// rate-limited like those of populated (see WaitEmpty), so it re-reads at
// least every 2 ms instead of trusting POLLPRI.
func (l *Leaf) WaitFrozen(d time.Duration) (bool, error) {
	return l.waitEvents(d, func(e Events) bool { return e.Frozen }, func(time.Duration) time.Duration { return 2 * time.Millisecond })
}
