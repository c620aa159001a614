// Package identity names processes in a way that survives PID reuse.
//
// A Token is boot id + pid + start time (field 22 of /proc/PID/stat, in clock
// ticks since boot) and, where the kernel has pidfs (Linux 6.9+), the pidfd's
// inode number: a 64-bit id that is never reused within a boot. The start
// time alone has 10 ms resolution, and a PID can come round within one tick
// (a small pid_max, or ns_last_pid); the inode tells those processes apart.
// A token from an earlier boot never matches a process of this one. A Handle is
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
	// ErrClosed is returned by a Handle's methods after Close.
	ErrClosed = errors.New("identity: handle closed")
)

// Token identifies one process for the lifetime of one boot.
type Token struct {
	OS        string // "linux"
	BootID    string // /proc/sys/kernel/random/boot_id
	PID       int
	StartTime uint64 // clock ticks after boot, /proc/PID/stat field 22
	// Ino is the pidfs inode of the process (0 where unknown: a token read
	// from /proc alone, or a kernel without pidfs).
	Ino uint64
}

// String formats the token as os:boot_id:pid:starttime, with :ino added
// when the pidfs inode is known.
func (t Token) String() string {
	if t.Ino != 0 {
		return fmt.Sprintf("%s:%s:%d:%d:%d", t.OS, t.BootID, t.PID, t.StartTime, t.Ino)
	}
	return fmt.Sprintf("%s:%s:%d:%d", t.OS, t.BootID, t.PID, t.StartTime)
}

// Key returns the token without its pidfs inode, for maps that must find
// a process whether or not the inode was known when it was seen.
func (t Token) Key() Token {
	t.Ino = 0
	return t
}

// Matches reports whether the process described by got is the one t
// names: the same boot, pid and start time, and the same pidfs inode when
// both know it.
func (t Token) Matches(got Token) bool {
	return t.OS == got.OS && t.BootID == got.BootID && t.PID == got.PID && t.StartTime == got.StartTime &&
		(t.Ino == 0 || got.Ino == 0 || t.Ino == got.Ino)
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
	if (len(f) != 4 && len(f) != 5) || f[0] == "" || f[1] == "" {
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
	t := Token{OS: f[0], BootID: f[1], PID: pid, StartTime: st}
	if len(f) == 5 {
		if t.Ino, err = strconv.ParseUint(f[4], 10, 64); err != nil || t.Ino == 0 {
			return Token{}, fmt.Errorf("%w: inode in %q", ErrBadToken, s)
		}
	}
	return t, nil
}
