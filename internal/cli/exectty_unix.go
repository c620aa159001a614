//go:build !windows

package cli

import (
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"
)

// ptyRelay is tether exec -t's terminal: a pty whose replica the command
// takes as its controlling terminal, relayed to the caller's stdin and
// stdout. While it lasts the caller's terminal, if stdin is one, is in
// raw mode (keys reach the command as typed: ^C is the command's
// terminal's to turn into SIGINT), and its window size follows the
// caller's (SIGWINCH).
type ptyRelay struct {
	replica *os.File
	master  *os.File
	in      *os.File
	restore func()
	winch   chan os.Signal
	resized chan struct{} // closed when the SIGWINCH relay has ended
	output  chan struct{} // closed when the command's output is all out
}

// openRelay opens the pty and starts relaying it to in and out.
func openRelay(in, out *os.File) (*ptyRelay, error) {
	master, replica, err := pty.Open()
	if err != nil {
		return nil, err
	}
	r := &ptyRelay{replica: replica, master: master, in: in, restore: func() {}, output: make(chan struct{})}
	if term.IsTerminal(int(in.Fd())) {
		pty.InheritSize(in, master)
		state, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			master.Close()
			replica.Close()
			return nil, err
		}
		r.restore = func() { term.Restore(int(in.Fd()), state) }
		r.winch, r.resized = make(chan os.Signal, 1), make(chan struct{})
		signal.Notify(r.winch, syscall.SIGWINCH)
		go func() {
			defer close(r.resized)
			for range r.winch {
				pty.InheritSize(in, master)
			}
		}()
	}
	go func() {
		// Ends with the process: a read of stdin cannot be cut.
		io.Copy(master, in)
		if r.winch == nil {
			// End of input that is not a terminal: the command's
			// terminal says so as a terminal does, ^D.
			master.Write([]byte{4})
		}
	}()
	go func() {
		io.Copy(out, master) // until EIO: no replica left open
		close(r.output)
	}()
	return r, nil
}

// close ends the relay once the command has exited: what it wrote is
// copied out, waiting at most a moment for a process it left holding
// the terminal, and the caller's terminal is restored.
func (r *ptyRelay) close() {
	r.replica.Close()
	select {
	case <-r.output:
	case <-time.After(500 * time.Millisecond):
		// A member the command left holds the replica: what it had
		// written is out by now; stop reading.
		if r.master.SetReadDeadline(time.Now()) == nil {
			<-r.output
		}
	}
	if r.winch != nil {
		signal.Stop(r.winch)
		close(r.winch)
		<-r.resized // it uses master's descriptor: not while it closes
	}
	r.master.Close()
	r.restore()
}
