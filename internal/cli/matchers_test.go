package cli

import (
	"regexp"
	"testing"

	"github.com/tether-run/tether/limits"
)

// The regexps the hand-written matchers replaced (issue 13: compiling
// them at init cost every start), kept here as their specification.
var (
	envKeyRe      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	bareSecondsRe = regexp.MustCompile(`^([0-9]+\.?[0-9]*|\.[0-9]+)$`)
)

var matcherInputs = []string{
	"", "=", "A=", "A=1", "_=x", "a_B9=", "9A=1", "A B=1", "A-B=1", "é=1", "A", "AB", "A==", "=A",
	"0", "5", "5.", ".5", "0.5", ".", "..", "1.2.3", "-1", "+1", "1e3", "0x10", "1_0", " 1", "1 ", "Inf", "NaN", "00.00",
}

// TestMatchersAsRegexps: hasEnvKey and limits.IsDecimal agree with the
// regexps they replaced.
func TestMatchersAsRegexps(t *testing.T) {
	for _, in := range matcherInputs {
		checkMatchers(t, in)
	}
}

// FuzzMatchersAsRegexps checks the same on any input.
func FuzzMatchersAsRegexps(f *testing.F) {
	for _, in := range matcherInputs {
		f.Add(in)
	}
	f.Fuzz(checkMatchers)
}

func checkMatchers(t *testing.T, in string) {
	if got, want := hasEnvKey(in), envKeyRe.MatchString(in); got != want {
		t.Errorf("hasEnvKey(%q) = %t, want %t", in, got, want)
	}
	if got, want := limits.IsDecimal(in), bareSecondsRe.MatchString(in); got != want {
		t.Errorf("limits.IsDecimal(%q) = %t, want %t", in, got, want)
	}
}
