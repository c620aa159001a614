package contain

import (
	"os"
	"strconv"
	"time"

	"github.com/tether-run/tether/internal/identity"
)

// execPatience bounds the wait for a started process to show its own
// image in /proc (identity.AwaitExec): microseconds as a rule, more under
// a loaded emulator. The wait is in the background, never the start's.
const execPatience = time.Second

// executes reports whether process pid is executing the file f: its
// /proc/PID/exe, the kernel's link to that very file, is f's device and
// inode, once its exec shows. False once the process has exited (a zombie
// has none), exec'd something else, or runs a script (the interpreter).
func executes(pid int, f *os.File) bool {
	if !identity.AwaitExec(pid, execPatience) {
		return false
	}
	exe, err := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return false
	}
	st, err := f.Stat()
	return err == nil && os.SameFile(exe, st)
}

// openSelf opens the running program's file.
func openSelf() (*os.File, string, error) {
	p, _ := os.Readlink("/proc/self/exe")
	f, err := os.Open("/proc/self/exe")
	return f, p, err
}
