package limits

import (
	"errors"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"1024", 1024, false},
		{"512M", 512 << 20, false},
		{"4G", 4 << 30, false},
		{"4g", 4 << 30, false},
		{"3500M", 3500 << 20, false},
		{"1.5G", 3 << 29, false},
		{"64MiB", 64 << 20, false},
		{"64MB", 64 << 20, false},
		{"0", 0, false},
		{"1T", 1 << 40, false},
		{"", 0, true},
		{"G", 0, true},
		{"-1G", 0, true},
		{"12X", 0, true},
		{"1.2.3M", 0, true},
		{"99999999999T", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSize(tt.in)
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d, error %t", tt.in, got, err, tt.want, tt.err)
			}
			if err != nil && !errors.Is(err, ErrSyntax) {
				t.Errorf("ParseSize(%q) error = %v, want ErrSyntax", tt.in, err)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64M", 3 << 29: "1.5G", 4096: "4K", 100: "100", 3500 << 20: "3.42G"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseCPUs(t *testing.T) {
	for in, want := range map[string]float64{"2": 2, "0.5": 0.5, " 1.25 ": 1.25} {
		if got, err := ParseCPUs(in); err != nil || got != want {
			t.Errorf("ParseCPUs(%q) = %g, %v, want %g", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "x", "NaN", "Inf"} {
		if _, err := ParseCPUs(bad); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseCPUs(%q) error = %v, want ErrSyntax", bad, err)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := (Spec{Memory: 1 << 30, MemoryHigh: 1 << 29, CPUs: 0.5, Pids: 10}).Validate(); err != nil {
		t.Errorf("Validate(good) = %v", err)
	}
	for name, s := range map[string]Spec{
		"high above max": {Memory: 1 << 29, MemoryHigh: 1 << 30},
		"negative":       {Pids: -1},
		"tiny cpus":      {CPUs: 0.001},
	} {
		if err := s.Validate(); !errors.Is(err, ErrSyntax) {
			t.Errorf("Validate(%s) = %v, want ErrSyntax", name, err)
		}
	}
	if !(Spec{}).IsZero() || (Spec{SwapSet: true}).IsZero() {
		t.Error("IsZero wrong for the zero spec or for --swap 0")
	}
	if q := (Spec{CPUs: 0.5}).Quota(); q != 50000 {
		t.Errorf("Quota(0.5) = %d, want 50000", q)
	}
}
