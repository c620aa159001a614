//go:build linux || windows

package sessionctl

import "github.com/tether-run/tether/receipt"

// `tether exec`'s wire: the client asks the session's supervisor, over the
// session's exec endpoint (ExecSocket in its runtime dir on Linux, the
// named pipe ExecPipe on Windows), to run a command in the group.

// ExecSocket is the supervisor's socket for `tether exec`, in the
// session's runtime dir (0700, the user's). Linux.
const ExecSocket = "tether.sock"

// ExecPipe is the named pipe of run runID's exec endpoint. Windows.
func ExecPipe(runID string) string { return `\\.\pipe\tether-exec-` + runID }

// ExecRequest is what a client sends (on Linux after one byte that
// carries its stdio).
type ExecRequest struct {
	Path string   `json:"path"` // resolved by the client, with its PATH and cwd
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	// TTY: stdin is a terminal the command takes as its controlling
	// terminal (tether exec -t); Unix only.
	TTY bool `json:"tty,omitempty"`
	// Stdio holds, on Windows, the client's handles for stdin, stdout
	// and stderr, which the supervisor duplicates from it.
	Stdio []uint64 `json:"stdio,omitempty"`
}

// ExecReply is the supervisor's answer: first Token (or Error and Code),
// then Exit once the command has exited.
type ExecReply struct {
	Token string        `json:"token,omitempty"`
	Error string        `json:"error,omitempty"`
	Code  int           `json:"code,omitempty"`
	Exit  *receipt.Exit `json:"exit,omitempty"`
}
