package registry

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckName: the name policy of sessions and pools (issue 15).
func TestCheckName(t *testing.T) {
	for _, good := range []string{"web", "a", "0", "9.", "x.y_z-1", "a-", "a..b", "x.json", "a.log.1", "A123456789012345678901234567890123456789012345678901234567890123"} {
		if err := CheckName(good); err != nil {
			t.Errorf("CheckName(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "a b", "ä", "A1234567890123456789012345678901234567890123456789012345678901234", "-\n",
		// Issue 15: a leading '.' is a temp file's (ls hid it, reap swept
		// it); a leading '-' a flag (the supervisor died on it).
		".h2", ".x.tmp1", "-x", "--", "-", "_x", "a\x00", "a\n", "a:b", "a=b", "a'b"} {
		if err := CheckName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", bad, err)
		}
	}
}

// TestCheckPool: a pool name follows the same policy, and its error calls
// it a pool.
func TestCheckPool(t *testing.T) {
	if err := CheckPool("ci"); err != nil {
		t.Errorf("CheckPool(ci) = %v", err)
	}
	if err := CheckPool("-x"); !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), "pool") {
		t.Errorf("CheckPool(-x) = %v, want ErrBadName naming a pool", err)
	}
}
