package contain

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
)

// Output runs the command and returns what it wrote to stdout, as
// exec.Cmd.Output does: when the main process fails and Stderr was not
// set, the *exec.ExitError inside Wait's *ExitError holds the start of
// what it wrote to stderr.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("contain: Stdout already set")
	}
	var stdout bytes.Buffer
	c.Stdout = &stdout
	var stderr *limitedBuffer
	if c.Stderr == nil {
		stderr = &limitedBuffer{max: 64 << 10}
		c.Stderr = stderr
	}
	err := c.Run()
	var ee *ExitError
	if stderr != nil && errors.As(err, &ee) && ee.ExitError != nil {
		ee.ExitError.Stderr = stderr.Bytes()
	}
	return stdout.Bytes(), err
}

// CombinedOutput runs the command and returns what it wrote to stdout and
// stderr, interleaved as written (one pipe for both).
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("contain: Stdout already set")
	}
	if c.Stderr != nil {
		return nil, errors.New("contain: Stderr already set")
	}
	var b syncBuffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// StdinPipe returns a pipe connected to the command's stdin. Closing it
// gives the command EOF; Wait closes it after the run ends.
func (c *Cmd) StdinPipe() (io.WriteCloser, error) {
	if c.Stdin != nil {
		return nil, errors.New("contain: Stdin already set")
	}
	if c.startedYet() {
		return nil, errors.New("contain: StdinPipe after Start")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.Stdin = r
	c.closeAfterStart = append(c.closeAfterStart, r)
	wc := &closeOnce{File: w}
	c.closeAfterWait = append(c.closeAfterWait, wc)
	return wc, nil
}

// StdoutPipe returns a pipe connected to the command's stdout. Wait closes
// it once the run has ended, so read all of it before calling Wait. Every
// member's writes to it end when the group is stopped.
func (c *Cmd) StdoutPipe() (io.ReadCloser, error) {
	if c.Stdout != nil {
		return nil, errors.New("contain: Stdout already set")
	}
	r, err := c.outPipe()
	if err != nil {
		return nil, err
	}
	c.Stdout = r.w
	return r, nil
}

// StderrPipe is StdoutPipe for stderr.
func (c *Cmd) StderrPipe() (io.ReadCloser, error) {
	if c.Stderr != nil {
		return nil, errors.New("contain: Stderr already set")
	}
	r, err := c.outPipe()
	if err != nil {
		return nil, err
	}
	c.Stderr = r.w
	return r, nil
}

// readPipe is the read end of an output pipe, with the write end the
// command gets.
type readPipe struct {
	*closeOnce
	w *os.File
}

func (c *Cmd) outPipe() (*readPipe, error) {
	if c.startedYet() {
		return nil, errors.New("contain: output pipe after Start")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.closeAfterStart = append(c.closeAfterStart, w)
	rp := &readPipe{closeOnce: &closeOnce{File: r}, w: w}
	c.closeAfterWait = append(c.closeAfterWait, rp.closeOnce)
	return rp, nil
}

func (c *Cmd) startedYet() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started
}

// closeOnce is an *os.File whose Close may be called by both the caller
// and Wait.
type closeOnce struct {
	*os.File
	once sync.Once
	err  error
}

func (c *closeOnce) Close() error {
	c.once.Do(func() { c.err = c.File.Close() })
	return c.err
}

// limitedBuffer keeps the first max bytes written to it and accepts the
// rest without keeping it.
type limitedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b
}

// syncBuffer is a bytes.Buffer that two copies may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Bytes()
}
