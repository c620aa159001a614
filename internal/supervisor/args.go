package supervisor

import (
	"fmt"
	"os"
)

// SuperviseArg is the first argument of a supervisor's command line.
const SuperviseArg = "__supervise"

// Args is the command line a client gives the supervisor of session name
// of the registry at state: the name after "--", so that whatever it is,
// it is never a flag.
func Args(exe, state, name string) []string {
	return []string{exe, SuperviseArg, "--state", state, "--", name}
}

// Main runs this process as the supervisor its arguments after
// SuperviseArg name (Args' command line) and returns once the session has
// ended: it is the body of the hidden `tether __supervise` command, which
// session.MaybeSupervise runs. Its stdin is the client's hand-off
// (SendSpec, SendGo); a hand-off closed without its go ends it at once,
// with nil.
func Main(args []string) error {
	if len(args) != 4 || args[0] != "--state" || args[2] != "--" || args[1] == "" {
		return fmt.Errorf("usage: %s --state DIR -- NAME (got %q)", SuperviseArg, args)
	}
	err := supervise(args[1], args[3], readyFile(), os.Stdin)
	if err == errAbandoned {
		return nil
	}
	return err
}
