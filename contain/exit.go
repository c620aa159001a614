package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/tether-run/tether/receipt"
)

// ExitError reports a main process that did not exit 0, or a run that
// timed out. It wraps the *exec.ExitError os/exec would have returned for
// the same process (where the system gives an *os.ProcessState: Linux),
// so errors.As(err, &exitErr) with an *exec.ExitError works as it does
// for os/exec, ProcessState and Stderr included.
type ExitError struct {
	// ExitError is os/exec's error for the main process: its
	// ProcessState, and with Output the start of what the command wrote
	// to stderr. Nil where the system gives no *os.ProcessState.
	*exec.ExitError
	// Code is the code tether passes on: the exit status, 128+n for
	// signal n, 124 on timeout (137 if the main process had to be killed
	// then, as timeout(1) says).
	Code int
	// Signal names the signal that killed the main process ("SIGKILL"),
	// if one did.
	Signal string
	// TimedOut says the run ended because Timeout expired.
	TimedOut bool
	// Storage says the run was stopped at a storage ceiling
	// (ReasonStorage); Code is then storageExitCode.
	Storage bool
}

func (e *ExitError) Error() string {
	var s string
	switch {
	case e.Signal != "":
		s = "contain: main process killed by " + e.Signal
	default:
		s = "contain: main process exited with status " + strconv.Itoa(e.Code)
	}
	switch {
	case e.TimedOut:
		s = "contain: timed out (" + s[len("contain: "):] + ")"
	case e.Storage:
		s = "contain: stopped at its storage ceiling (" + s[len("contain: "):] + ")"
	}
	return s
}

// storageExitCode is the exit code of a run stopped at a storage
// ceiling: 128+25, as a shell reports a process killed by SIGXFSZ for
// writing past its file size limit (RLIMIT_FSIZE), whatever the main
// process's own status after the stop.
const storageExitCode = 128 + 25

// endCode is the code tether passes on for a run that ended for reason
// with the main process's exit e.
func endCode(reason Reason, e receipt.Exit) int {
	switch reason {
	case ReasonTimeout:
		return timedOutCode(e)
	case ReasonStorage:
		return storageExitCode
	}
	return e.Code
}

// timedOutCode is a timed-out run's exit code, as timeout(1) gives it:
// 124, or 128+9 when the main process died of SIGKILL — the kill after
// the grace — as `timeout -k` tells a forced kill apart. (Windows, which
// has no signals, says 124.)
func timedOutCode(e receipt.Exit) int {
	if e.Signal == "SIGKILL" {
		return 128 + 9
	}
	return 124
}

// Unwrap returns the *exec.ExitError, if there is one.
func (e *ExitError) Unwrap() error {
	if e.ExitError == nil {
		return nil
	}
	return e.ExitError
}

// ExitCode returns Code (it shadows the embedded ProcessState's, which
// knows nothing of timeouts and says -1 for a signal).
func (e *ExitError) ExitCode() int { return e.Code }

// notConfirmed is Wait's error when the stop could not be proven: it is
// ErrNotConfirmed, and wraps the main process's failure if there was one.
type notConfirmed struct {
	why  string
	exit *ExitError
}

func (e *notConfirmed) Error() string {
	s := ErrNotConfirmed.Error() + ": " + e.why
	if e.exit != nil {
		s += "; " + e.exit.Error()[len("contain: "):]
	}
	return s
}

func (e *notConfirmed) Is(target error) bool { return target == ErrNotConfirmed }

func (e *notConfirmed) Unwrap() error {
	if e.exit == nil {
		return nil
	}
	return e.exit
}

// waitError is Wait's error for the finished receipt r; st is the main
// process's state where the system gives one.
func waitError(r *receipt.Receipt, st *os.ProcessState) error {
	var ee *ExitError
	if r.Exit.Code != 0 {
		ee = &ExitError{Code: r.Exit.Code, Signal: r.Exit.Signal, TimedOut: r.TimedOut, Storage: r.Stop.Reason == string(ReasonStorage)}
		if st != nil {
			ee.ExitError = &exec.ExitError{ProcessState: st}
		}
	}
	if !r.StopConfirmed {
		return &notConfirmed{why: unconfirmedWhy(r), exit: ee}
	}
	if ee == nil {
		return nil
	}
	return ee
}

func unconfirmedWhy(r *receipt.Receipt) string {
	var why []string
	if !r.Evidence.Empty {
		why = append(why, "group not seen empty")
	}
	if !r.Evidence.MainReaped {
		why = append(why, "main process not reaped")
	}
	if n := len(r.Evidence.Unconfirmed); n > 0 {
		why = append(why, fmt.Sprintf("%d members not confirmed gone", n))
	}
	if len(why) == 0 {
		return "no proof recorded"
	}
	return strings.Join(why, "; ")
}

// StartErrorCode maps a Start error to tether's exit code: 127 when the
// command was not found, 126 when it was found but could not be executed,
// 125 for every other failure (tether's own).
func StartErrorCode(err error) int {
	var ee *exec.Error
	var pe *os.PathError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 127
		}
		return 126
	case errors.As(err, &pe):
		if code, ok := spawnErrorCode(pe); ok {
			return code
		}
	}
	return 125
}
