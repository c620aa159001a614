package registry

import "fmt"

// Error is an error about one named session or run. It reads
// `session "NAME": what is wrong`, naming the session instead of the
// packages the error passed through (issue 11); errors.Is and errors.As
// still find Err, the sentinel it is an instance of (of this package or
// of session), and Cause, what it came from.
type Error struct {
	Name string
	// Msg says what is wrong, in words for the user.
	Msg string
	// Err is the sentinel (ErrNotFound, ErrExists, ...).
	Err error
	// Cause, if set, is the error behind it. It is not printed: Msg says
	// what of it matters.
	Cause error
}

// Errorf returns an *Error about the session name, an instance of
// sentinel (nil for none), with the message format and a.
func Errorf(name string, sentinel error, format string, a ...any) *Error {
	return &Error{Name: name, Err: sentinel, Msg: fmt.Sprintf(format, a...)}
}

// Error reads `session "NAME": Msg`, or Msg alone when Name is empty (a
// session that was never named: its start failed before it had one).
func (e *Error) Error() string {
	if e.Name == "" {
		return e.Msg
	}
	return fmt.Sprintf("session %q: %s", e.Name, e.Msg)
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	var errs []error
	for _, err := range []error{e.Err, e.Cause} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
