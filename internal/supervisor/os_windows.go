package supervisor

import (
	"os"
	"strconv"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/sessionctl"
)

// readyFile is the supervisor's end of the report pipe, nil if it has
// none.
func readyFile() *os.File {
	n, err := strconv.ParseUint(os.Getenv(sessionctl.ReadyEnv), 10, 64)
	os.Unsetenv(sessionctl.ReadyEnv) // not the session's command's
	if err != nil || n == 0 {
		return nil
	}
	return os.NewFile(uintptr(n), "ready")
}

// bindings are the caveats of a supervisor's session: that it runs in its
// caller's job, when it does (the job forbade breakaway).
func bindings() []string {
	in := os.Getenv(sessionctl.CallerJobEnv) == "1"
	os.Unsetenv(sessionctl.CallerJobEnv)
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

// enterScope does nothing on Windows: there is no systemd.
func enterScope(spec *sessionctl.Spec, name string) error { return nil }
