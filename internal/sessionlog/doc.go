// Package sessionlog is a session's log store: the supervisor's capture
// of its command's stdout and stderr (StartCapture) into entry-encoded
// files rotated by size (Log: a write never fails, a dropped one is
// counted and marked by a gap entry), and the reading of them (OpenTail,
// View: plain bytes, timestamps or JSON Lines, a tail, one stream, from a
// time) that `tether logs` and status use.
package sessionlog

import (
	"io"
	"os"
	"time"
)

// ViewOptions say what a View shows of a log.
type ViewOptions struct {
	// Tail shows only the last Tail lines; negative: all.
	Tail int
	// Since skips entries older than this; zero: from the start.
	Since time.Time
	// Stream is "out" or "err" for one stream only; "" for both.
	Stream string
	// Timestamps shows each line as "TIME STREAM LINE"; JSON as JSON
	// Lines {"time","stream","line"}. Without either, the view is plain:
	// exactly the bytes the command wrote, in order.
	Timestamps, JSON bool
	// Notes receives what the view cannot show in its output: gaps (output
	// dropped, or files rotated away before they were read). Nil: none.
	Notes io.Writer
}

// Lost is signalled (never blocking) each time output is dropped.
func (l *Log) Lost() <-chan struct{} { return l.lost }

// File is the newest file read: the one being written, unless it rotated
// since.
func (t *Tail) File() *os.File {
	if t.cur == nil {
		return nil
	}
	return t.cur.f
}

// Err is the view's first write error: once set, nothing more is written.
func (v *View) Err() error { return v.err }
