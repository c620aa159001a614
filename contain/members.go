package contain

// The pgroup mechanism (macOS) finds a run's processes in snapshots of
// the process table. Without cgroups or a subreaper, a process is the
// run's when it descends from the main process or from a member seen
// before, or shares the main process's process group while the main
// process lives. groupMembers is that decision, kept free of darwin's
// system calls so that it is tested on every system.

// tableEntry is one process of a process-table snapshot.
type tableEntry struct {
	PID, PPID, PGID int
	// Start is the process's start time in the identity token's unit
	// (microseconds on macOS): with PID it names one process for good.
	Start  uint64
	Zombie bool
}

// memberKey names one process: pid and start time.
type memberKey struct {
	PID   int
	Start uint64
}

func (e tableEntry) key() memberKey { return memberKey{e.PID, e.Start} }

// groupMembers returns the live processes of snap that belong to the run
// whose main process is main: main itself; every member seen before
// (known reports them) that is still there, even reparented; every descendant of a
// member, where a child counts only if it started no earlier than its
// parent (a parent's pid reused after the child was born names a younger
// process, so that link is refused); and, while main is alive — its pid,
// the process group's id, then cannot name another group — every process
// in main's process group. self (tether) is never a member. Zombies have
// exited: they are not returned.
func groupMembers(snap []tableEntry, main memberKey, known func(memberKey) bool, self int) []tableEntry {
	byPID := make(map[int]tableEntry, len(snap))
	kids := map[int][]tableEntry{}
	for _, e := range snap {
		byPID[e.PID] = e
		kids[e.PPID] = append(kids[e.PPID], e)
	}
	mainAlive := false
	if m, ok := byPID[main.PID]; ok && m.Start == main.Start && !m.Zombie {
		mainAlive = true
	}
	in := map[int]bool{}
	var queue []tableEntry
	add := func(e tableEntry) {
		if e.PID == self || e.PID <= 1 || in[e.PID] {
			return
		}
		in[e.PID] = true
		queue = append(queue, e)
	}
	for _, e := range snap {
		switch {
		case e.key() == main:
			add(e)
		case known(e.key()):
			add(e)
		case mainAlive && e.PGID == main.PID:
			add(e)
		}
	}
	for i := 0; i < len(queue); i++ {
		p := queue[i]
		for _, c := range kids[p.PID] {
			if c.Start >= p.Start {
				add(c)
			}
		}
	}
	var out []tableEntry
	for _, e := range queue {
		if !e.Zombie {
			out = append(out, e)
		}
	}
	return out
}
