package sessionlog

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// capture reads a session's stdout and stderr in one goroutine, in
// poll(2), and hands them to its encoder (see encoder for what the order
// of the log means).
type Capture struct {
	encoder
	fds     [2]int // read ends, stdout and stderr; -1 once at EOF
	event   int    // eventfd: the session ended
	done    chan struct{}
	buf     []byte
	pollFDs [3]unix.PollFd
}

// StartCapture makes the session's stdout and stderr pipes and starts
// reading them. The returned files are the write ends for the command;
// the caller closes them once the command has started.
func StartCapture(log *Log) (stdout, stderr *os.File, c *Capture, err error) {
	c = &Capture{encoder: encoder{log: log}, fds: [2]int{-1, -1}, event: -1, done: make(chan struct{})}
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
func (c *Capture) End() {
	var one = [8]byte{1}
	unix.Write(c.event, one[:])
	<-c.done
	unix.Close(c.event)
	c.event = -1
}

// closePipes closes the read ends still open.
func (c *Capture) closePipes() {
	for i, fd := range c.fds {
		if fd >= 0 {
			unix.Close(fd)
			c.fds[i] = -1
		}
	}
}

// run is the capture's goroutine. It sleeps in poll(2) without a timeout
// while the session is quiet: an idle session costs no wake-ups.
func (c *Capture) run() {
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
