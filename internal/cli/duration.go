package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tether-run/tether/limits"

	"github.com/spf13/pflag"
)

// durationValue is the type of every duration flag: a Go duration (10s,
// 1m30s, 250ms) or, as timeout(1) takes it, a non-negative number of
// seconds (5, 0.5) or days (1d, 0.5d; timeout's s, m and h are Go's).
// Negative durations are refused: none of tether's durations has a
// meaning below zero.
type durationValue time.Duration

// errDuration is what a bad value is told; pflag names the flag and the
// value around it.
var errDuration = errors.New("want a duration (10s, 1m30s, 250ms), a number of seconds (5, 0.5) or of days (1d)")

// parseDuration parses a duration flag's value.
func parseDuration(s string) (time.Duration, error) {
	unit, num := float64(time.Second), s
	if n, ok := strings.CutSuffix(s, "d"); ok && limits.IsDecimal(n) {
		unit, num = float64(24*time.Hour), n
	}
	if limits.IsDecimal(num) {
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, errDuration
		}
		d := math.Round(v * unit)
		// >=: float64(math.MaxInt64) is 2^63, one past the largest
		// Duration, and converting it wraps to the most negative one
		// (found by FuzzParseDuration, issue 15).
		if d >= math.MaxInt64 {
			return 0, fmt.Errorf("%s is too long", s)
		}
		return time.Duration(d), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errDuration
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	return d, nil
}

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) Type() string { return "duration" }

// String is "0" for zero, so that help shows no "(default 0s)".
func (d *durationValue) String() string {
	if *d == 0 {
		return "0"
	}
	return time.Duration(*d).String()
}

// durationVar defines a duration flag of the type above.
func durationVar(fl *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fl.Var((*durationValue)(p), name, usage)
}
