package session

import (
	"bytes"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
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

// capture reads a session's stdout and stderr in one goroutine and writes
// them to its log as one interleaved sequence of entries.
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
type capture struct {
	log   *rotatingLog
	fds   [2]int // read ends, stdout and stderr; -1 once at EOF
	event int    // eventfd: the session ended
	done  chan struct{}

	buf     []byte
	batch   []byte
	pollFDs [3]unix.PollFd
	ts      []byte // the current read's timestamp, formatted
	prefix  []byte // ts and the kind of a full line of the current read

	// The line being assembled: at most one stream has one, because data
	// of the other stream arriving flushes it as a partial entry (so the
	// log keeps the order of arrival).
	pend       []byte
	pendStream int
	pendTime   time.Time
	pendTS     []byte
}

// startCapture makes the session's stdout and stderr pipes and starts
// reading them. The returned files are the write ends for the command;
// the caller closes them once the command has started.
func startCapture(log *rotatingLog) (stdout, stderr *os.File, c *capture, err error) {
	c = &capture{log: log, fds: [2]int{-1, -1}, event: -1, done: make(chan struct{})}
	var w [2]*os.File
	defer func() {
		if err != nil {
			c.closePipes()
			if c.event >= 0 {
				unix.Close(c.event)
			}
			for _, f := range w {
				if f != nil {
					f.Close()
				}
			}
		}
	}()
	for i, name := range []string{"stdout", "stderr"} {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return nil, nil, nil, os.NewSyscallError("pipe2", err)
		}
		c.fds[i] = p[0]
		w[i] = os.NewFile(uintptr(p[1]), "session "+name)
		if err := unix.SetNonblock(p[0], true); err != nil {
			return nil, nil, nil, os.NewSyscallError("fcntl", err)
		}
	}
	if c.event, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, nil, nil, os.NewSyscallError("eventfd", err)
	}
	c.buf = make([]byte, 64<<10)
	go c.run()
	return w[0], w[1], c, nil
}

// End tells the capture that the session has ended and waits until it
// has written all the session wrote (both pipes at EOF), or until
// captureCutoff has passed. The eventfd is End's: the goroutine may have
// returned already (both pipes at EOF), and closes only the pipes.
func (c *capture) End() {
	var one = [8]byte{1}
	unix.Write(c.event, one[:])
	<-c.done
	unix.Close(c.event)
	c.event = -1
}

// closePipes closes the read ends still open.
func (c *capture) closePipes() {
	for i, fd := range c.fds {
		if fd >= 0 {
			unix.Close(fd)
			c.fds[i] = -1
		}
	}
}

// run is the capture's goroutine. It sleeps in poll(2) without a timeout
// while the session is quiet: an idle session costs no wake-ups.
func (c *capture) run() {
	defer close(c.done)
	defer c.closePipes()
	var deadline time.Time // set once the session ended
	for c.fds[0] >= 0 || c.fds[1] >= 0 {
		fds := c.pollFDs[:0]
		for _, fd := range c.fds {
			if fd >= 0 {
				fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			}
		}
		if deadline.IsZero() {
			fds = append(fds, unix.PollFd{Fd: int32(c.event), Events: unix.POLLIN})
		}
		timeout := -1
		if len(c.pend) > 0 {
			timeout = msUntil(c.pendTime.Add(partialQuiet))
		}
		if !deadline.IsZero() {
			if t := msUntil(deadline); timeout < 0 || t < timeout {
				timeout = t
			}
		}
		if _, err := unix.Poll(fds, timeout); err != nil && !errors.Is(err, unix.EINTR) {
			break // cannot happen with valid fds; the session is not disturbed
		}
		now := time.Now()
		c.ts = appendTime(c.ts[:0], now)
		for _, p := range fds {
			if p.Revents == 0 {
				continue
			}
			if int(p.Fd) == c.event {
				deadline = now.Add(captureCutoff)
				continue
			}
			s := 0
			if int(p.Fd) == c.fds[1] {
				s = 1
			}
			n, err := unix.Read(c.fds[s], c.buf)
			switch {
			case n > 0:
				c.feed(s, c.buf[:n], now)
			case err == unix.EAGAIN || err == unix.EINTR:
			default: // EOF, or an error no retry cures
				if len(c.pend) > 0 && c.pendStream == s {
					c.flushPartial()
				}
				unix.Close(c.fds[s])
				c.fds[s] = -1
			}
		}
		if len(c.pend) > 0 && !now.Before(c.pendTime.Add(partialQuiet)) {
			c.flushPartial()
		}
		c.flush()
		if !deadline.IsZero() && !now.Before(deadline) {
			break
		}
	}
	if len(c.pend) > 0 {
		c.flushPartial()
	}
	c.flush()
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
func (c *capture) feed(s int, data []byte, now time.Time) {
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
func (c *capture) flushPartial() {
	c.batch = appendEntry(c.batch, c.pendTS, kinds[c.pendStream][1], c.pend)
	c.pend = c.pend[:0]
}

// flush writes what was encoded to the log: one write per wake-up.
func (c *capture) flush() {
	if len(c.batch) > 0 {
		c.log.write(c.batch)
		c.batch = c.batch[:0]
	}
}
