package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"0", 0},
		{"5", 5 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{".25", 250 * time.Millisecond},
		{"5.", 5 * time.Second},
		{"90", 90 * time.Second},
		{"0.001", time.Millisecond},
		{"10s", 10 * time.Second},
		{"1m30s", 90 * time.Second},
		{"250ms", 250 * time.Millisecond},
		{"2h", 2 * time.Hour},
		{"0s", 0},
		{"1d", 24 * time.Hour},
		{"0.5d", 12 * time.Hour},
		{"0d", 0},
		{"1.5m", 90 * time.Second},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseDuration(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("parseDuration(%q) = %v, %v, want %v, nil", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseDurationBad(t *testing.T) {
	for _, in := range []string{"", "-1", "-5s", "abc", "5x", "1e3", "0x10", "inf", "NaN", "+5", "d", "-1d", "1dd", "1d2h", "1e3d", "999999999d", "99999999999999999999"} {
		t.Run(in, func(t *testing.T) {
			if got, err := parseDuration(in); err == nil {
				t.Errorf("parseDuration(%q) = %v, nil, want an error", in, got)
			}
		})
	}
}

func TestDurationFlagError(t *testing.T) {
	var d time.Duration
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	durationVar(fl, &d, "timeout", time.Second, "")
	err := fl.Parse([]string{"--timeout", "soon"})
	if err == nil || !strings.Contains(err.Error(), "--timeout") || !strings.Contains(err.Error(), `"soon"`) {
		t.Errorf("--timeout soon: error %v, want one naming the flag and the value", err)
	}
	if err := fl.Parse([]string{"--timeout", "2.5"}); err != nil || d != 2500*time.Millisecond {
		t.Errorf("--timeout 2.5 = %v, %v, want 2.5s, nil", d, err)
	}
}

func TestDurationFlagDefault(t *testing.T) {
	var a, b time.Duration
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	durationVar(fl, &a, "ttl", 0, "ttl")
	durationVar(fl, &b, "grace", 10*time.Second, "grace")
	usage := fl.FlagUsages()
	if strings.Contains(usage, "default 0") || !strings.Contains(usage, "(default 10s)") {
		t.Errorf("FlagUsages() = %q, want no default for --ttl and (default 10s) for --grace", usage)
	}
}

// TestIntFlagError: a bad whole number is told in tether's words, naming
// the flag and the value, not strconv's (issue 27).
func TestIntFlagError(t *testing.T) {
	var n int
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	intVarP(fl, &n, "tail", "n", -1, "")
	for _, in := range []string{"x", "1.5", "99999999999999999999"} {
		err := fl.Parse([]string{"--tail", in})
		if err == nil || !strings.Contains(err.Error(), "--tail") || !strings.Contains(err.Error(), `"`+in+`"`) || strings.Contains(err.Error(), "strconv") {
			t.Errorf("--tail %s: error %v, want one naming the flag and the value in tether's words", in, err)
		}
	}
	if err := fl.Parse([]string{"-n", "-3"}); err != nil || n != -3 {
		t.Errorf("-n -3 = %d, %v, want -3, nil", n, err)
	}
}
