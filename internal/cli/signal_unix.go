//go:build unix

package cli

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// parseSignal parses --signal as kill(1) and timeout -s take it: a name
// with or without SIG, in any case (TERM, SIGUSR1, hup), or a number.
func parseSignal(s string) (syscall.Signal, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n <= 0 || unix.SignalName(syscall.Signal(n)) == "" {
			return 0, fmt.Errorf("--signal %s: no such signal", s)
		}
		return syscall.Signal(n), nil
	}
	name := strings.ToUpper(s)
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	if sig := unix.SignalNum(name); sig != 0 {
		return sig, nil
	}
	return 0, fmt.Errorf("--signal %q: no such signal (want a name like TERM, INT, HUP, USR1, KILL, or a number)", s)
}
