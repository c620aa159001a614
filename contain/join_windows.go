package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
	"golang.org/x/sys/windows"
)

// Member is a process Join started in a running group.
type Member struct {
	token identity.Token // the member's identity (boot id, pid, start time)
	mu    sync.Mutex
	h     windows.Handle // the member's process, held until Wait returns (then 0)
}

// Join starts ec as one more member of the running group: created in its
// job (PROC_THREAD_ATTRIBUTE_JOB_LIST), in a process group of its own,
// with ec's Path, Args, Env (nil: ours), Dir and standard handles (each
// an *os.File, or nil for NUL). It is how a session's supervisor runs
// `tether exec`. What it starts is in the job like anything else, and
// the group's stop stops it.
//
// It fails with ErrNoJoin when the group's stop has begun.
func (c *Cmd) Join(ec *exec.Cmd) (*Member, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !c.started:
		return nil, ErrNotStarted
	case c.stopping || c.sys.job == nil:
		return nil, fmt.Errorf("%w: its stop has begun", ErrNoJoin)
	}
	// c.mu is held until the member is in the job's members: the stop,
	// which takes it to begin, cannot miss it.
	var vs []any
	for _, v := range []any{ec.Stdin, ec.Stdout, ec.Stderr} {
		if f, ok := v.(*os.File); ok && f != nil {
			vs = append(vs, f)
		} else if v != nil {
			return nil, errors.New("contain: Join on Windows takes *os.File standard handles only")
		} else {
			vs = append(vs, nil)
		}
	}
	std, nuls, err := inheritStd(vs)
	defer func() {
		for _, f := range nuls {
			f.Close()
		}
		for _, h := range std {
			windows.CloseHandle(h)
		}
	}()
	if err != nil {
		return nil, err
	}
	env := ec.Env
	if env == nil {
		env = os.Environ()
	}
	pi, err := createInJob(c.sys.job.h, ec.Path, ec.Args, env, ec.Dir, std)
	if err != nil {
		return nil, err
	}
	windows.CloseHandle(pi.Thread)
	m := &Member{h: pi.Process}
	if dup, err := dupHandle(pi.Process, false); err == nil {
		if jm := c.sys.job.adopt(pi.ProcessId, dup); jm != nil {
			m.token, _ = identity.Parse(jm.token)
		}
	}
	if m.token.IsZero() {
		windows.TerminateProcess(pi.Process, killExitCode)
		m.Wait()
		return nil, fmt.Errorf("%w: the member (pid %d) could not be proven in the job", ErrPlacement, pi.ProcessId)
	}
	return m, nil
}

// Wait waits for the member to exit; it returns how it ended, as a
// receipt records the main process's exit.
func (m *Member) Wait() receipt.Exit {
	m.mu.Lock()
	h := m.h
	m.mu.Unlock()
	var code uint32
	ok := h != 0 && waitExit(h, -1) && windows.GetExitCodeProcess(h, &code) == nil
	m.mu.Lock()
	if m.h != 0 {
		windows.CloseHandle(m.h)
		m.h = 0
	}
	m.mu.Unlock()
	if !ok {
		return receipt.Exit{Code: 125, MainStatus: -1}
	}
	return receipt.Exit{Code: int(code), MainStatus: int(code)}
}

// Signal ends the member for SIGKILL (TerminateProcess, exit code 137);
// Windows has no other signal to send it.
func (m *Member) Signal(sig os.Signal) error {
	if sig != os.Kill && sig != syscall.SIGKILL {
		return fmt.Errorf("contain: %v: %w on Windows", sig, errors.ErrUnsupported)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == 0 {
		return fmt.Errorf("contain: the member has been waited for")
	}
	return windows.TerminateProcess(m.h, killExitCode)
}
