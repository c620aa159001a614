package registry

import "fmt"

// MaxName is the longest session or pool name, in bytes.
const MaxName = 64

// CheckName enforces the one name policy for sessions (and, through
// CheckPool, pools): 1–64 bytes, the first a letter or digit, the rest
// letters, digits, '.', '_' or '-' (Docker's rule for container names).
//
// Why each part (issue 15): a name travels into file names (records/NAME.json,
// s/NAME/, logs/NAME.log.N), the supervisor's argv, environment values,
// JSON, tables and log lines. A leading '.' makes a name look like one of
// the registry's temp files, which ls skips and reap sweeps (a live
// session became invisible, then reaped); a leading '-' makes it a flag to
// whatever parses an argv it is in (the supervisor died on `-x`); '/' and
// NUL cannot be in a file name; spaces, quotes, control characters and
// non-ASCII would need quoting in every table, shell line and log line.
// The limit keeps socket paths under the runtime dir within AF_UNIX's 107
// bytes. Every entry point checks names with this function, so what is
// accepted here is safe everywhere a name goes.
func CheckName(name string) error {
	if !validName(name) {
		return Errorf(name, ErrBadName, "bad name: use 1–%d of A-Z a-z 0-9 . _ -, starting with a letter or digit", MaxName)
	}
	return nil
}

// CheckPool applies the name policy to a pool name (--pool), with an
// error that calls it a pool.
func CheckPool(pool string) error {
	if !validName(pool) {
		return fmt.Errorf("%w: pool %q: use 1–%d of A-Z a-z 0-9 . _ -, starting with a letter or digit", ErrBadName, pool, MaxName)
	}
	return nil
}

func validName(name string) bool {
	if len(name) < 1 || len(name) > MaxName || !alnum(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !alnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
