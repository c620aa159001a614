package hooks

import "time"

// JobUsage is what a run's Job Object says of its processes now
// (Windows).
type JobUsage struct {
	// Processes is the number of processes in the job.
	Processes int
	// CPU is the user and kernel time of every process ever in the job.
	CPU time.Duration
	// CommitBytes is the memory the processes in the job have committed
	// (their commit charge, summed: private memory in RAM or the page
	// file).
	CommitBytes int64
	// Inside says whether the calling process is in the job.
	Inside bool
	// PIDs are the processes in the job.
	PIDs []int
}

// Windows' job queries, set by package contain at its init on Windows
// (nil elsewhere): tether doctor's host report and a session's status
// read them; an embedder has no need of them.
var (
	// WineVersion is the version of Wine tether runs under, or "" on
	// Windows.
	WineVersion func() string
	// InJob reports whether tether itself runs in a job (a CI runner's,
	// a service's): a run's job is then nested in it.
	InJob func() bool
	// ReadJobUsage reads the usage of the job of run runID, which a live
	// process of this user created (a session's supervisor). The caller
	// proves that creator alive before and after, so that the name was
	// the run's job throughout.
	ReadJobUsage func(runID string) (JobUsage, error)
)
