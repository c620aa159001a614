package session

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// forwarded is the signal tether exec sends its command for sig: a
// console break cannot reach a process on another console, so ^C (and
// anything else) ends it (SIGKILL: TerminateProcess).
func forwarded(syscall.Signal) syscall.Signal { return syscall.SIGKILL }

// pipeClient is the client's end of the exec pipe.
type pipeClient struct{ *os.File }

// sendStdio names the client's standard handles in the request: the
// supervisor duplicates them while the client waits for its answer.
func (c pipeClient) sendStdio(stdio [3]*os.File, req *sessionctl.ExecRequest) error {
	for _, f := range stdio {
		req.Stdio = append(req.Stdio, uint64(f.Fd()))
	}
	return nil
}

// dialExec connects to the session's exec pipe, and proves that the
// process serving it is the session's supervisor.
func dialExec(_ *store.Registry, rec *registry.Record) (execClient, error) {
	name, err := windows.UTF16PtrFromString(sessionctl.ExecPipe(rec.RunID))
	if err != nil {
		return nil, err
	}
	var h windows.Handle
	for try := 0; ; try++ {
		h, err = windows.CreateFile(name, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
			windows.SECURITY_SQOS_PRESENT|windows.SECURITY_IDENTIFICATION, 0)
		if err != windows.ERROR_PIPE_BUSY || try == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond) // every instance is taken: the next is made at once
	}
	if err != nil {
		return nil, registry.Errorf(rec.Name, nil, "takes no exec requests (its supervisor predates tether exec on Windows, or is ending): %v", err)
	}
	var pid uint32
	sup, perr := identity.Parse(rec.Supervisor)
	if err := windows.GetNamedPipeServerProcessId(h, &pid); err != nil || perr != nil || int(pid) != sup.PID || identity.Check(rec.Supervisor) != nil {
		windows.CloseHandle(h)
		return nil, registry.Errorf(rec.Name, nil, "exec: the pipe %s is served by pid %d, not by the session's supervisor", sessionctl.ExecPipe(rec.RunID), pid)
	}
	return pipeClient{os.NewFile(uintptr(h), "exec pipe")}, nil
}
