package receipt

// Limits is the budget of a run as it was applied, and what the run did
// against it.
type Limits struct {
	// Mode is "strict" (a limit that cannot be applied stops the start)
	// or "best-effort" (the run starts and NotApplied says what is missing).
	Mode       string       `json:"mode"`
	Applied    []LimitSet   `json:"applied"`
	NotApplied []LimitUnset `json:"not_applied"`
	Outcome    *Outcome     `json:"outcome,omitempty"`
	// V1PlacementVerifiedBy says how birth in the v1 leaves was proven:
	// "spawner-thread-before-fork" (the forking thread was read back in
	// every leaf; children are born in their forking thread's cgroups).
	V1PlacementVerifiedBy string `json:"v1_placement_verified_by,omitempty"`
	// V1Leaves lists every cgroup v1 leaf the run created (hybrid hosts),
	// so that they are removed on every path, by reap after a crash too.
	V1Leaves []string `json:"v1_leaves,omitempty"`
}

// LimitSet is one limit written to a cgroup file and read back.
type LimitSet struct {
	Name      string `json:"name"`      // memory, memory_high, swap, cpus, pids
	Requested string `json:"requested"` // as asked: 4G, 0.5, 512
	Backend   string `json:"backend"`   // v2, v1, or host (nothing to write: see Note)
	File      string `json:"file"`
	Written   string `json:"written"`
	ReadBack  string `json:"read_back"`
	Note      string `json:"note,omitempty"`
}

// LimitUnset is a requested limit that could not be applied.
type LimitUnset struct {
	Name      string `json:"name"`
	Requested string `json:"requested"`
	Reason    string `json:"reason"`
}

// Outcome is what the group did against its budget, read from the
// controllers' own counters before the cgroups were removed.
type Outcome struct {
	MemoryPeakBytes  int64    `json:"memory_peak_bytes"`
	OOMKills         int64    `json:"oom_kills"`
	MemoryLimitHits  int64    `json:"memory_limit_hits"`
	PidsLimitHits    int64    `json:"pids_limit_hits"`
	CPUThrottled     int64    `json:"cpu_nr_throttled"`
	CPUThrottledUsec int64    `json:"cpu_throttled_usec"`
	Sources          []string `json:"sources"`
}
