// Package identity names processes in a way that survives PID reuse.
//
// A Token is boot id + pid + start time (field 22 of /proc/PID/stat, in clock
// ticks since boot). Two processes never share a token within one boot, and a
// token from an earlier boot never matches a process of this one. A Handle is
// a pidfd that was checked against a token after it was opened, so a signal
// sent through it reaches exactly the process the token names.
package identity

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var (
	// ErrMismatch is returned when the process behind a pid is not the one a
	// token names (the pid was reused, or the boot changed). The caller must
	// not act on that pid.
	ErrMismatch = errors.New("identity: process does not match token")
	// ErrGone is returned when no process has the pid any more. For a caller
	// stopping a group this is success: the member is already absent.
	ErrGone = errors.New("identity: process is gone")
	// ErrBadToken is returned by Parse for text that is not a token.
	ErrBadToken = errors.New("identity: malformed token")
)

// Token identifies one process for the lifetime of one boot.
type Token struct {
	OS        string // "linux"
	BootID    string // /proc/sys/kernel/random/boot_id
	PID       int
	StartTime uint64 // clock ticks after boot, /proc/PID/stat field 22
}

// String formats the token as os:boot_id:pid:starttime.
func (t Token) String() string {
	return fmt.Sprintf("%s:%s:%d:%d", t.OS, t.BootID, t.PID, t.StartTime)
}

// IsZero reports whether t is the zero token.
func (t Token) IsZero() bool { return t == Token{} }

// MarshalText encodes the token as its string form.
func (t Token) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes a token written by MarshalText.
func (t *Token) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// Parse reads a token in the form written by Token.String.
func Parse(s string) (Token, error) {
	f := strings.Split(s, ":")
	if len(f) != 4 || f[0] == "" || f[1] == "" {
		return Token{}, fmt.Errorf("%w: %q", ErrBadToken, s)
	}
	pid, err := strconv.Atoi(f[2])
	if err != nil || pid <= 0 {
		return Token{}, fmt.Errorf("%w: pid in %q", ErrBadToken, s)
	}
	st, err := strconv.ParseUint(f[3], 10, 64)
	if err != nil {
		return Token{}, fmt.Errorf("%w: start time in %q", ErrBadToken, s)
	}
	return Token{OS: f[0], BootID: f[1], PID: pid, StartTime: st}, nil
}
