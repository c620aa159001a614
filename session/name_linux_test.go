package session

import (
	"regexp"
	"testing"
)

// unsafeNameRe is what safeName replaced (issue 13: compiling it at init
// cost every tether start), kept as its specification.
var unsafeNameRe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

var safeNameInputs = []string{"", "sleep", "a b", "a  b", "./x", "é", "éé-x", "a\xffb", "\xff\xfe", "python3.12", "my_tool-2", "a/b\\c", "\x00\n"}

// TestSafeNameAsRegexp: safeName agrees with the regexp it replaced.
func TestSafeNameAsRegexp(t *testing.T) {
	for _, in := range safeNameInputs {
		checkSafeName(t, in)
	}
}

// FuzzSafeName checks the same on any name.
func FuzzSafeName(f *testing.F) {
	for _, in := range safeNameInputs {
		f.Add(in)
	}
	f.Fuzz(checkSafeName)
}

func checkSafeName(t *testing.T, in string) {
	if got, want := safeName(in), unsafeNameRe.ReplaceAllString(in, "_"); got != want {
		t.Errorf("safeName(%q) = %q, want %q", in, got, want)
	}
}
