package contain

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// Signal terminates the main process for os.Kill, the one signal Windows
// has (as os.Process.Signal); others are errors. Once the main process
// has exited it returns os.ErrProcessDone. To stop the run, use Stop:
// the main process alone leaves what it started.
func (c *Cmd) Signal(sig os.Signal) error {
	if sig != os.Kill {
		return errors.New("contain: Signal: only os.Kill is supported on Windows")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started || c.sys.proc == 0 {
		return ErrNotStarted
	}
	if !c.rec.EndedAt.IsZero() {
		return os.ErrProcessDone
	}
	return windows.TerminateProcess(c.sys.proc, killExitCode)
}
