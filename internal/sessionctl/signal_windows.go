package sessionctl

import (
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/identity"
)

// SignalNum is 0 for every name: on Windows the polite stop is always
// CTRL_BREAK_EVENT, and no stop signal can be chosen.
func SignalNum(name string) syscall.Signal { return 0 }

// SignalName is sig's name.
func SignalName(sig syscall.Signal) string { return sig.String() }

// eventName is the name of the event that wakes the supervisor with
// token sup, urgent for a stop without grace. A token has no backslash.
func eventName(sup string, urgent bool) string {
	kind := "stop"
	if urgent {
		kind = "kill"
	}
	return `Local\tether-` + kind + "-" + strings.ReplaceAll(sup, ":", "-")
}

// StopRequests is how a `tether stop` wakes the supervisor with token
// self: its two events, which it creates, turned into the signals the
// watcher knows (SIGTERM, and SIGINT for a stop without grace).
func StopRequests(self string) (chan os.Signal, error) {
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

// Wake wakes the supervisor sup to read its stop requests, by its event.
func Wake(sup *identity.Handle, urgent bool) error {
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
