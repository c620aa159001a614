//go:build linux || darwin

package contain

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/tether-run/tether/receipt"
	"golang.org/x/sys/unix"
)

// exitResult is how the main process ended, as its waiter saw it.
type exitResult struct {
	state *os.ProcessState
	err   error
	at    time.Time
}

// exitOf is the receipt's exit of ex: the main process's code, or 128+n
// when it died of signal n (125 when it was never reaped).
func exitOf(ex *exitResult) receipt.Exit {
	if ex == nil || ex.state == nil {
		return receipt.Exit{Code: 125, MainStatus: -1}
	}
	ws, ok := ex.state.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return receipt.Exit{Code: 128 + int(ws.Signal()), MainStatus: -1, Signal: unix.SignalName(ws.Signal())}
	}
	return receipt.Exit{Code: ex.state.ExitCode(), MainStatus: ex.state.ExitCode()}
}

// spawnErrorCode is StartErrorCode for a failed fork/exec.
func spawnErrorCode(pe *os.PathError) (int, bool) {
	if pe.Op != "fork/exec" {
		return 0, false
	}
	switch {
	case errors.Is(pe, syscall.ENOENT):
		return 127, true
	case errors.Is(pe, syscall.EACCES), errors.Is(pe, syscall.ENOEXEC), errors.Is(pe, syscall.EISDIR), errors.Is(pe, syscall.EPERM):
		return 126, true
	}
	return 0, false
}

// awaitMain waits until the main process's exit has been collected by
// its launch goroutine, or until deadline.
func (c *Cmd) awaitMain(deadline time.Time) bool {
	if c.sys.exit != nil {
		return true
	}
	select {
	case ex := <-c.sys.exitCh:
		c.sys.exit = &ex
		return true
	case <-time.After(time.Until(deadline)):
		return false
	}
}
