//go:build windows || darwin

package sessionlog

import (
	"os"
	"time"
)

// capture reads a session's stdout and stderr, one goroutine per pipe
// (Windows pipes cannot be polled; macOS uses the same code), and hands
// what they read to one goroutine that encodes it in the order it
// arrives (see encoder).
type Capture struct {
	encoder
	r    [2]*os.File // read ends, stdout and stderr
	data chan chunk
	end  chan struct{} // closed by End: the session ended
	done chan struct{} // closed when everything read is in the log
}

// chunk is one read of stream s: data, or its end.
type chunk struct {
	s   int
	b   []byte
	eof bool
	at  time.Time
}

// StartCapture makes the session's stdout and stderr pipes and starts
// reading them. The returned files are the write ends for the command;
// the caller closes them once the command has started.
func StartCapture(log *Log) (stdout, stderr *os.File, c *Capture, err error) {
	c = &Capture{encoder: encoder{log: log}, data: make(chan chunk, 16), end: make(chan struct{}), done: make(chan struct{})}
	var w [2]*os.File
	for i := range w {
		if c.r[i], w[i], err = os.Pipe(); err != nil {
			for j := 0; j < i; j++ {
				c.r[j].Close()
				w[j].Close()
			}
			return nil, nil, nil, err
		}
	}
	for i := range c.r {
		go c.read(i)
	}
	go c.run()
	return w[0], w[1], c, nil
}

// read reads stream s until its end, handing each read to run.
func (c *Capture) read(s int) {
	for {
		buf := make([]byte, 64<<10)
		n, err := c.r[s].Read(buf)
		ch := chunk{s: s, b: buf[:n], eof: err != nil && n == 0, at: time.Now()}
		select {
		case c.data <- ch:
		case <-c.done:
			return
		}
		if ch.eof {
			return
		}
	}
}

// End tells the capture that the session has ended and waits until it
// has written all the session wrote (both pipes at their end), or until
// captureCutoff has passed.
func (c *Capture) End() {
	close(c.end)
	<-c.done
}

// run encodes what the readers hand it. It sleeps without a timer while
// the session is quiet.
func (c *Capture) run() {
	defer close(c.done)
	defer func() { c.r[0].Close(); c.r[1].Close() }()
	open := 2
	end := c.end
	var deadline <-chan time.Time
	for open > 0 {
		var quiet <-chan time.Time
		if len(c.pend) > 0 {
			quiet = time.After(time.Until(c.pendTime.Add(partialQuiet)))
		}
		select {
		case ch := <-c.data:
			c.ts = appendTime(c.ts[:0], ch.at)
			if ch.eof {
				if len(c.pend) > 0 && c.pendStream == ch.s {
					c.flushPartial()
				}
				open--
			} else {
				c.feed(ch.s, ch.b, ch.at)
			}
		case <-quiet:
			c.flushPartial()
		case <-end:
			end, deadline = nil, time.After(captureCutoff)
		case <-deadline:
			open = 0
		}
		c.flush()
	}
	if len(c.pend) > 0 {
		c.flushPartial()
	}
	c.flush()
}
