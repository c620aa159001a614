package receipt

import "time"

// Storage is the census of one storage ceiling (--storage-max PATH=SIZE):
// the bytes of the regular files under Path (symlinks not followed),
// counted before the command started, at every interval while it ran
// (the peak) and after its stop.
type Storage struct {
	Path       string    `json:"path"`
	LimitBytes int64     `json:"limit_bytes"`
	Before     int64     `json:"before_bytes"`
	BeforeAt   time.Time `json:"before_at"`
	Peak       int64     `json:"peak_bytes"`
	PeakAt     time.Time `json:"peak_at,omitzero"`
	// After is -1 when the census at the end failed (Error says why).
	After   int64     `json:"after_bytes"`
	AfterAt time.Time `json:"after_at,omitzero"`
	// Censuses counts the censuses taken, the first one included.
	Censuses int `json:"censuses"`
	// Exceeded says a census found more than LimitBytes.
	Exceeded bool `json:"exceeded"`
	// Error is why a census could not complete (the first such).
	Error string `json:"error,omitempty"`
}

// Scratch is the private scratch dir a run's command had as its TMPDIR.
type Scratch struct {
	Path string `json:"path"`
	// Removed says it was removed (the run exited 0 and its stop was
	// confirmed); otherwise Kept says why it was kept.
	Removed bool   `json:"removed"`
	Kept    string `json:"kept,omitempty"`
}
