package cli

import (
	"fmt"
	"strings"
	"syscall"
)

// parseSignal accepts only the default on Windows: there the first step
// of the stop protocol is CTRL_BREAK_EVENT to the command's process group,
// and there are no signals to choose from.
func parseSignal(s string) (syscall.Signal, error) {
	switch strings.ToUpper(strings.TrimPrefix(strings.ToUpper(s), "SIG")) {
	case "TERM", "":
		return 0, nil
	}
	return 0, fmt.Errorf("--signal %q: not supported on Windows (the stop begins with CTRL_BREAK_EVENT to the command's process group)", s)
}
