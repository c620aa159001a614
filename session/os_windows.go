package session

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/store"
)

// What sessions do differently on Windows: the supervisor is started
// without the caller's console and out of the caller's job where that job
// allows it, gets the report pipe as an inherited handle named in its
// environment, and is woken by two named events instead of signals.

// signalNum is 0 for every name: on Windows the polite stop is always
// CTRL_BREAK_EVENT, and no stop signal can be chosen.
func signalNum(name string) syscall.Signal { return 0 }

// signalName is sig's name.
func signalName(sig syscall.Signal) string { return sig.String() }

// readyEnv names, in the supervisor's environment, the inherited handle of
// its report pipe.
const readyEnv = "TETHER_READY_HANDLE"

// readyFile is the supervisor's end of the report pipe, nil if it has
// none.
func readyFile() *os.File {
	n, err := strconv.ParseUint(os.Getenv(readyEnv), 10, 64)
	os.Unsetenv(readyEnv) // not the session's command's
	if err != nil || n == 0 {
		return nil
	}
	return os.NewFile(uintptr(n), "ready")
}

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
	cmd.Env = append(cmd.Env, readyEnv+"="+strconv.FormatUint(uint64(h), 10))
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
	env := append(cmd.Env[:len(cmd.Env):len(cmd.Env)], callerJobEnv+"=1")
	again := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: env, Dir: cmd.Dir, SysProcAttr: &sys}
	return again, again.Start()
}

// callerJobEnv tells a supervisor that it was started inside its
// caller's job.
const callerJobEnv = "TETHER_IN_CALLER_JOB"

// bindings are the caveats of a supervisor's session: that it runs in its
// caller's job, when it does (the job forbade breakaway).
func bindings() []string {
	in := os.Getenv(callerJobEnv) == "1"
	os.Unsetenv(callerJobEnv)
	if !in {
		return nil
	}
	return []string{"started inside its caller's job, which forbids breakaway (CREATE_BREAKAWAY_FROM_JOB was refused): the session ends when that job does"}
}

// detachFromCaller keeps the report pipe from the session's command:
// Windows gives a child only the handles listed for it, and the pipe is
// made non-inheritable.
func detachFromCaller(ready *os.File) {
	if ready != nil {
		windows.SetHandleInformation(windows.Handle(ready.Fd()), windows.HANDLE_FLAG_INHERIT, 0)
	}
}

// eventName is the name of the event that wakes the supervisor with
// token sup, urgent for a stop without grace. A token has no backslash.
func eventName(sup string, urgent bool) string {
	kind := "stop"
	if urgent {
		kind = "kill"
	}
	return `Local\tether-` + kind + "-" + strings.ReplaceAll(sup, ":", "-")
}

// stopRequests is how a `tether stop` wakes the supervisor with token
// self: its two events, which it creates, turned into the signals the
// watcher knows (SIGTERM, and SIGINT for a stop without grace).
func stopRequests(self string) (chan os.Signal, error) {
	var evs [2]windows.Handle
	for i, urgent := range []bool{false, true} {
		name, err := windows.UTF16PtrFromString(eventName(self, urgent))
		if err != nil {
			return nil, err
		}
		// Auto-reset: one wake-up per SetEvent, as one signal.
		if evs[i], err = windows.CreateEvent(nil, 0, 0, name); err != nil {
			return nil, os.NewSyscallError("CreateEvent", err)
		}
	}
	sigs := make(chan os.Signal, 4)
	go func() {
		for {
			ev, err := windows.WaitForMultipleObjects(evs[:], false, windows.INFINITE)
			if err != nil {
				return
			}
			sig := syscall.SIGTERM
			if ev == windows.WAIT_OBJECT_0+1 {
				sig = syscall.SIGINT
			}
			sigs <- sig
		}
	}()
	return sigs, nil
}

// wake wakes the supervisor sup to read its stop requests, by its event.
func wake(sup *identity.Handle, urgent bool) error {
	name, err := windows.UTF16PtrFromString(eventName(sup.Token.String(), urgent))
	if err != nil {
		return err
	}
	ev, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, name)
	if err != nil {
		if sup.Exited() {
			return identity.ErrGone
		}
		return os.NewSyscallError("OpenEvent", err)
	}
	defer windows.CloseHandle(ev)
	return windows.SetEvent(ev)
}

// enterScope does nothing on Windows: there is no systemd.
func enterScope(spec *supervisorSpec, name string) error { return nil }

// enclosingSession finds no session on Windows yet: a job cannot be told
// from outside which session's it is (issue 14), so the default owner of
// a session started inside another is none, not that session.
func enclosingSession(reg *store.Registry) (string, bool) { return "", false }
