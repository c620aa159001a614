// Package limits holds a run's resource budget (memory, memory.high, swap,
// CPUs, pids) and applies it to the cgroups a run is born into: the v2
// leaf where the controller is available there, else a v1 leaf beside it
// on hybrid hosts. Every value is written before anything starts, read
// back, and reported; a limit that cannot be applied is an error unless
// the caller asked for best effort.
package limits

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

var (
	// ErrSyntax is returned for a size or CPU count that cannot be parsed.
	ErrSyntax = errors.New("limits: bad value")
	// ErrUnavailable is returned when a limit cannot be applied here: a
	// controller it needs is not available to the parent cgroup, or a
	// Windows job does not hold it. The message says why.
	ErrUnavailable = errors.New("limits: not available")
	// ErrAboveParent is returned when a limit exceeds what the parent
	// cgroups allow; the message has both numbers.
	ErrAboveParent = errors.New("limits: above the parent's limit")
	// ErrInsufficientSpace is returned by CheckFree when a filesystem has
	// less free space than required; the message has both numbers.
	ErrInsufficientSpace = errors.New("limits: not enough free space")
)

// Spec is a budget. Zero fields are unset, except Swap, which is set only
// when SwapSet is true (a swap limit of 0 forbids swapping).
type Spec struct {
	Memory     int64   // bytes: memory.max (v1 memory.limit_in_bytes)
	MemoryHigh int64   // bytes: memory.high (throttling; v2 only)
	Swap       int64   // bytes: memory.swap.max (v1: memory.memsw.limit_in_bytes - Memory)
	SwapSet    bool    // Swap was given
	CPUs       float64 // cpu.max quota/period (v1 cpu.cfs_quota_us/cpu.cfs_period_us)
	Pids       int64   // pids.max
}

// IsZero reports whether no limit is set.
func (s Spec) IsZero() bool {
	return s.Memory == 0 && s.MemoryHigh == 0 && !s.SwapSet && s.CPUs == 0 && s.Pids == 0
}

// Validate checks the values against each other.
func (s Spec) Validate() error {
	var errs []error
	if s.Memory < 0 || s.MemoryHigh < 0 || s.Swap < 0 || s.Pids < 0 || s.CPUs < 0 {
		errs = append(errs, fmt.Errorf("%w: limits must not be negative", ErrSyntax))
	}
	if s.Memory > 0 && s.MemoryHigh > s.Memory {
		errs = append(errs, fmt.Errorf("%w: --memory-high %s is above --memory %s", ErrSyntax, FormatSize(s.MemoryHigh), FormatSize(s.Memory)))
	}
	if s.CPUs != 0 && s.CPUs < 0.01 {
		errs = append(errs, fmt.Errorf("%w: --cpus %g is below 0.01", ErrSyntax, s.CPUs))
	}
	return errors.Join(errs...)
}

// ParseSize parses a byte size: a number with an optional binary unit
// K, M, G or T (also KB/KiB and so on, case-insensitive), as cgroup tools
// use them: "512M", "4G", "1.5G", "1048576". Fractions round down to a
// whole byte.
func ParseSize(s string) (int64, error) {
	in := strings.TrimSpace(s)
	num := strings.TrimRightFunc(in, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	unit := strings.ToUpper(strings.TrimSpace(in[len(num):]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I")
	mult := map[string]float64{"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[unit]
	if num == "" || mult == 0 || strings.HasPrefix(in, "-") {
		return 0, fmt.Errorf("%w: size %q: want a number with an optional unit K, M, G or T (512M, 4G)", ErrSyntax, s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || f*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("%w: size %q", ErrSyntax, s)
	}
	return int64(f * mult), nil
}

// FormatSize prints bytes with the largest binary unit, to two decimals:
// 64M, 1.5G, 3.42G, 100.
func FormatSize(n int64) string {
	for _, u := range []struct {
		s string
		v int64
	}{{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.v {
			f := strconv.FormatFloat(float64(n)/float64(u.v), 'f', 2, 64)
			s := strings.TrimRight(strings.TrimRight(f, "0"), ".") + u.s
			if _, err := ParseSize(s); err != nil {
				// Rounded up past the largest size (8388608T is 2^63):
				// the exact number, which parses (FuzzParseSize).
				return strconv.FormatInt(n, 10)
			}
			return s
		}
	}
	return strconv.FormatInt(n, 10)
}

// maxCPUs bounds a CPU count: more than any machine has, and small
// enough that its quota (CPUs × CPUPeriod µs) is a plain int64.
const maxCPUs = 1 << 20

// IsDecimal reports whether s is a plain decimal number: digits with at
// most one dot (5, 0.5, .5, 5.). strconv.ParseFloat would also take
// signs, exponents, hex, underscores, Inf and NaN, which a count or a
// number of seconds never needs (and 1e300 CPUs made a quota that wrapped
// negative: issue 15). A loop, not a regexp: compiling one at init cost
// every tether start tens of microseconds (issue 13).
func IsDecimal(s string) bool {
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// ParseCPUs parses a CPU count such as "2" or "0.5": a positive decimal
// number up to maxCPUs.
func ParseCPUs(s string) (float64, error) {
	in := strings.TrimSpace(s)
	f, err := strconv.ParseFloat(in, 64)
	if !IsDecimal(in) || err != nil || f <= 0 || f > maxCPUs {
		return 0, fmt.Errorf("%w: CPU count %q: want a positive number up to %d such as 2 or 0.5", ErrSyntax, s, maxCPUs)
	}
	return f, nil
}

// CPUPeriod is the cpu.max / cpu.cfs_period_us period tether writes, in
// microseconds (the kernel's default).
const CPUPeriod = 100000

// Quota returns the CPU quota in microseconds per CPUPeriod.
func (s Spec) Quota() int64 { return int64(math.Round(s.CPUs * CPUPeriod)) }
