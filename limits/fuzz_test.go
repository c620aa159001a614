package limits

import (
	"errors"
	"math"
	"testing"
)

// FuzzParseSize: any string is a size or ErrSyntax, never a panic; a
// size is never negative, and the largest unit fits int64 (issue 15).
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512M", "4G", "1.5G", "1048576", "0", "1KiB", "2tb", " 64k ", "-1", "1e3K", "9223372036854775807", "8E", "", ".", "NaN", "Inf", "0x1p4", "1.5.5M"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseSize(%q) = %v, want ErrSyntax", s, err)
			}
			return
		}
		if n < 0 {
			t.Errorf("ParseSize(%q) = %d, want >= 0", s, n)
		}
		if got, err := ParseSize(FormatSize(n)); err != nil || got < 0 {
			t.Errorf("ParseSize(FormatSize(%d) = %q) = %d, %v", n, FormatSize(n), got, err)
		}
	})
}

// FuzzParseCPUs: a CPU count that parses and validates gives a positive
// quota that fits cpu.max, never a wrapped or NaN one.
func FuzzParseCPUs(f *testing.F) {
	for _, s := range []string{"2", "0.5", "0.01", "1e300", "NaN", "-1", "0", "Inf", "0x1p-2", " 3 ", "1_0", "1000000", "1000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCPUs(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseCPUs(%q) = %v, want ErrSyntax", s, err)
			}
			return
		}
		if !(c > 0) || math.IsInf(c, 0) || c > maxCPUs {
			t.Fatalf("ParseCPUs(%q) = %g, want in (0, %d]", s, c, maxCPUs)
		}
		spec := Spec{CPUs: c}
		if spec.Validate() == nil {
			if q := spec.Quota(); q < 1000 || q > maxCPUs*CPUPeriod {
				t.Errorf("ParseCPUs(%q) = %g: Quota() = %d, want within [1000, %d]", s, c, q, maxCPUs*CPUPeriod)
			}
		}
	})
}
