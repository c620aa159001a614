package session

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
)

// What sessions do differently on Windows: the supervisor is started
// without the caller's console and out of the caller's job where that job
// allows it, gets the report pipe as an inherited handle named in its
// environment, and is woken by two named events instead of signals.

// startDetached starts cmd, the supervisor, detached from its caller:
// with a console of its own that no window shows (CREATE_NO_WINDOW: its
// command's console programs share it, which CTRL_BREAK_EVENT needs), in
// a process group of its own, and out of the caller's job
// (CREATE_BREAKAWAY_FROM_JOB) so that the session outlives a caller that
// runs in a job which kills on close. wr, the report pipe's write end, is
// inherited, and named in TETHER_READY_HANDLE. Where the caller's job
// does not allow breakaway (ERROR_ACCESS_DENIED) it starts a copy within
// that job: the session then ends when the job does (a session started
// inside a `tether run` is that run's). It returns the command that runs.
func startDetached(cmd *exec.Cmd, wr *os.File) (*exec.Cmd, error) {
	h := windows.Handle(wr.Fd())
	windows.SetHandleInformation(h, windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT)
	cmd.Env = append(cmd.Env, sessionctl.ReadyEnv+"="+strconv.FormatUint(uint64(h), 10))
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CreationFlags:              windows.CREATE_NO_WINDOW | windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_BREAKAWAY_FROM_JOB,
		AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(h)},
	}
	err := cmd.Start()
	if !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return cmd, err
	}
	sys := *cmd.SysProcAttr
	sys.CreationFlags &^= windows.CREATE_BREAKAWAY_FROM_JOB
	env := append(cmd.Env[:len(cmd.Env):len(cmd.Env)], sessionctl.CallerJobEnv+"=1")
	again := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: env, Dir: cmd.Dir, Stdin: cmd.Stdin, SysProcAttr: &sys}
	return again, again.Start()
}

// enclosingSession finds no session on Windows yet: a job cannot be told
// from outside which session's it is (issue 14), so the default owner of
// a session started inside another is none, not that session.
func enclosingSession(reg *store.Registry) (string, bool) { return "", false }
