//go:build linux || windows || darwin

package contain

import (
	"cmp"
	"io"
	"os"
	"time"
)

// The command's standard streams: files are handed to it as they are;
// other readers and writers go through pipes that tether copies itself.

func (c *Cmd) stdin() (io.Reader, error) {
	if c.Stdin == nil {
		return nil, nil
	}
	if f, ok := c.Stdin.(*os.File); ok {
		return f, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.sys.stdinW = w
	c.sys.childEnds = append(c.sys.childEnds, r)
	go func() {
		io.Copy(w, c.Stdin)
		w.Close()
	}()
	return r, nil
}

// outputs gives the command's stdout and stderr: one pipe for both when
// Stdout and Stderr are the same writer, as os/exec does, so what the
// command writes to them keeps its order.
func (c *Cmd) outputs() (stdout, stderr io.Writer, err error) {
	if stdout, err = c.output(c.Stdout); err != nil {
		return nil, nil, err
	}
	if sameWriter(c.Stdout, c.Stderr) {
		return stdout, stdout, nil
	}
	stderr, err = c.output(c.Stderr)
	return stdout, stderr, err
}

// sameWriter reports whether a and b are the same non-nil writer; writers
// of types that cannot be compared are not.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() { recover() }()
	return a != nil && a == b
}

func (c *Cmd) output(dst io.Writer) (io.Writer, error) {
	if dst == nil {
		return nil, nil
	}
	if f, ok := dst.(*os.File); ok {
		return f, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.sys.childEnds = append(c.sys.childEnds, w)
	c.sys.outR = append(c.sys.outR, r)
	c.sys.copies.Add(1)
	go func() {
		defer c.sys.copies.Done()
		io.Copy(dst, r)
		r.Close()
	}()
	return w, nil
}

// copyCutoff bounds how long the output copies may drain once the stop
// protocol has ended, when WaitDelay does not.
const copyCutoff = time.Second

// awaitCopies waits for the output copies to reach EOF, and past
// WaitDelay (default copyCutoff) cuts them off by closing the pipes' read ends: a member that
// could not be stopped, or a process it handed the pipe to, may hold the
// write end forever. Either way the copies have returned when it returns,
// so nothing is written to the caller's writers after Wait (os/exec's
// WaitDelay does the same).
func (c *Cmd) awaitCopies() {
	copied := make(chan struct{})
	go func() { c.sys.copies.Wait(); close(copied) }()
	select {
	case <-copied:
		return
	case <-time.After(cmp.Or(max(c.WaitDelay, 0), copyCutoff)):
	}
	for _, r := range c.sys.outR {
		r.Close() // ends a Read in progress (the pipe is in the poller)
	}
	<-copied
}
