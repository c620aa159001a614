//go:build linux || windows || darwin

package sessionlog

import (
	"bytes"
	"time"
)

// Timing of the capture.
const (
	// partialQuiet is how long a line without its LF waits for the rest
	// before it is written as a partial entry: a prompt or a progress bar
	// shows up in `logs -f` this soon, while a line written in a few
	// pieces in quick succession stays one entry.
	partialQuiet = 100 * time.Millisecond
	// captureCutoff bounds how long the capture drains once the session
	// has ended: a process that escaped the stop, or one the pipe was
	// handed to, may hold a write end forever (contain's copies stop the
	// same way).
	captureCutoff = time.Second
)

// A capture reads a session's stdout and stderr and writes them to its
// log as one interleaved sequence of entries; its encoder, below, is the
// part that is the same on every system.
//
// What the order means: within a stream it is exact (a pipe is FIFO).
// Across streams it is the order in which the supervisor read the data;
// each read is timestamped when it returns. Output the command wrote on
// one stream before its next write on the other is in order whenever the
// supervisor read it in between — always, for a command that waits for
// its output to be taken (a terminal-speed writer, or the tests' helper).
// When the supervisor finds both pipes holding data at one wake-up (it was
// not scheduled between the writes: a loaded machine, a fast writer),
// their relative order is unknown to anyone: stdout's data is written
// first and both get the same timestamp.
//
// Nothing stronger is to be had with pipes: a pipe keeps no time of each
// write (its mtime is coarse and only the last), and one pipe for both
// streams would order them exactly but lose which stream each byte came
// from. Sockets can carry a kernel timestamp per write (SO_TIMESTAMPNS),
// but opening /dev/stdout or /dev/stderr fails on a socket (ENXIO), which
// breaks the scripts that write `>/dev/stderr` (journald's stream sockets
// have that problem): tether keeps pipes.
//
// The pipes are never closed before the session has ended, and reading
// never stops because the log failed (the log drops and counts instead):
// the session's processes never block on, or die of SIGPIPE from, the log.

// encoder turns what a session's stdout and stderr gave into log
// entries, in the order read, and writes them to its log.
type encoder struct {
	log    *Log
	batch  []byte
	ts     []byte // the current read's timestamp, formatted
	prefix []byte // ts and the kind of a full line of the current read

	// The line being assembled: at most one stream has one, because data
	// of the other stream arriving flushes it as a partial entry (so the
	// log keeps the order of arrival).
	pend       []byte
	pendStream int
	pendTime   time.Time
	pendTS     []byte
}

// msUntil returns poll's timeout for t: milliseconds, rounded up.
func msUntil(t time.Time) int {
	d := time.Until(t)
	if d <= 0 {
		return 0
	}
	return int((d + time.Millisecond - 1) / time.Millisecond)
}

var kinds = [2][2]byte{{kindOut, kindOutPart}, {kindErr, kindErrPart}}

// feed encodes data read from stream s at now.
func (c *encoder) feed(s int, data []byte, now time.Time) {
	if len(c.pend) > 0 && c.pendStream != s {
		c.flushPartial()
	}
	full, part := kinds[s][0], kinds[s][1]
	// The prefix of a full line read now, built once per read: the burst
	// of short lines (yes) is where the log's cost per line shows.
	c.prefix = append(append(c.prefix[:0], c.ts...), ' ', full, ' ')
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if len(c.pend) == 0 {
				c.pendStream, c.pendTime = s, now
				c.pendTS = append(c.pendTS[:0], c.ts...)
			}
			room := maxEntryPayload - len(c.pend)
			if len(data) < room {
				c.pend = append(c.pend, data...)
				return
			}
			c.pend = append(c.pend, data[:room]...)
			data = data[room:]
			c.flushPartial()
			continue
		}
		line := data[:i]
		data = data[i+1:]
		if len(c.pend) > 0 {
			if len(c.pend)+len(line) <= maxEntryPayload {
				c.batch = appendEntry(c.batch, c.pendTS, full, append(c.pend, line...))
				c.pend = c.pend[:0]
				continue
			}
			room := maxEntryPayload - len(c.pend)
			c.pend = append(c.pend, line[:room]...)
			line = line[room:]
			c.flushPartial()
		}
		for len(line) > maxEntryPayload {
			c.batch = appendEntry(c.batch, c.ts, part, line[:maxEntryPayload])
			line = line[maxEntryPayload:]
		}
		c.batch = append(append(append(c.batch, c.prefix...), line...), '\n')
	}
}

// flushPartial encodes the line being assembled as a partial entry.
func (c *encoder) flushPartial() {
	c.batch = appendEntry(c.batch, c.pendTS, kinds[c.pendStream][1], c.pend)
	c.pend = c.pend[:0]
}

// flush writes what was encoded to the log: one write per wake-up.
func (c *encoder) flush() {
	if len(c.batch) > 0 {
		c.log.write(c.batch)
		c.batch = c.batch[:0]
	}
}
