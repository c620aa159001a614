//go:build unix || windows

package store

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tether-run/tether/registry"
)

// Retention bounds the ended runs a state directory keeps (issue 27:
// ended records, logs of up to 32 MiB and receipts grew without bound).
type Retention struct {
	// Keep is how many ended runs are kept, the newest (0: no count bound).
	Keep int
	// MaxAge removes ended runs that ended longer ago (0: no age bound).
	MaxAge time.Duration
	// Settle keeps every run that ended less than Settle ago, whatever
	// Keep says: whoever stopped or waited on it may not have read its
	// receipt yet (a stop --all of 50 sessions: each prunes as it ends).
	Settle time.Duration
}

// DefaultRetention is the bound a session's end applies when RetainEnv
// does not say otherwise: the last 20 ended runs of the user, none older
// than 7 days, none removed in the minute after it ended.
var DefaultRetention = Retention{Keep: 20, MaxAge: 7 * 24 * time.Hour, Settle: time.Minute}

// RetainEnv sets the retention: "COUNT,AGE[,SETTLE]" (AGE and SETTLE Go
// durations or a number of days as 7d; 0 for no such bound; SETTLE 1m
// when not given), or "off".
const RetainEnv = "TETHER_RETAIN"

// String is the bound as RetainEnv takes it.
func (rt Retention) String() string {
	s := strconv.Itoa(rt.Keep) + "," + days(rt.MaxAge)
	if rt.Settle != DefaultRetention.Settle {
		s += "," + days(rt.Settle)
	}
	return s
}

// days prints d as RetainEnv reads it: whole days as 7d.
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 && d > 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// RetentionFromEnv returns the retention RetainEnv sets (getenv is
// os.Getenv in production), else DefaultRetention. A value it cannot
// read is an error, returned with DefaultRetention.
func RetentionFromEnv(getenv func(string) string) (Retention, error) {
	v := getenv(RetainEnv)
	switch v {
	case "":
		return DefaultRetention, nil
	case "off":
		return Retention{}, nil
	}
	f := strings.Split(v, ",")
	rt := Retention{Settle: DefaultRetention.Settle}
	var err error
	if len(f) < 2 || len(f) > 3 {
		err = errors.New("fields")
	}
	if err == nil {
		rt.Keep, err = strconv.Atoi(f[0])
		if err == nil && rt.Keep < 0 {
			err = errors.New("negative")
		}
	}
	if err == nil {
		rt.MaxAge, err = parseAge(f[1])
	}
	if err == nil && len(f) == 3 {
		rt.Settle, err = parseAge(f[2])
	}
	if err != nil {
		return DefaultRetention, fmt.Errorf("%s=%q: want COUNT,AGE[,SETTLE] (20,7d,1m; 0 for no bound) or off; keeping the default %s", RetainEnv, v, DefaultRetention)
	}
	return rt, nil
}

// parseAge reads a Go duration, or whole days (7d).
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 {
			return 0, errors.New("bad days")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		err = errors.New("negative")
	}
	return d, err
}

// Prune removes the ended runs rt does not keep — beyond the newest
// rt.Keep, or ended more than rt.MaxAge before now, and not within
// rt.Settle of now — with their logs,
// receipts and configurations, and returns them (dry: removes nothing,
// returns what it would remove). A run that is still holding something
// (its runtime dir or cgroup leaf: a stop not confirmed) is left, as are
// records that cannot be read (tether reap quarantines those); their
// errors are returned. It takes the registry's lock.
func (r *Registry) Prune(rt Retention, now time.Time, dry bool) ([]Removed, []error) {
	if rt.Keep <= 0 && rt.MaxAge <= 0 {
		return nil, nil
	}
	unlock, err := r.Lock()
	if err != nil {
		return nil, []error{err}
	}
	defer unlock()
	names, err := r.readDirNames("ended")
	if err != nil {
		return nil, []error{err}
	}
	var stems []string
	for _, n := range names {
		if stem, ok := strings.CutSuffix(n, ".json"); ok && !strings.HasPrefix(stem, ".") {
			stems = append(stems, stem)
		}
	}
	recs := make([]*registry.Record, len(stems))
	errAt := make([]error, len(stems))
	for i, s := range stems {
		recs[i], errAt[i] = r.readStem("ended", s)
	}
	type run struct {
		rec  *registry.Record
		stem string
	}
	var runs []run
	var errs []error
	for i := range stems {
		if errAt[i] != nil {
			errs = append(errs, errAt[i])
		} else {
			runs = append(runs, run{recs[i], stems[i]})
		}
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].rec.UpdatedAt.After(runs[j].rec.UpdatedAt) })
	var out []Removed
	for i, x := range runs {
		old := rt.MaxAge > 0 && now.Sub(x.rec.UpdatedAt) > rt.MaxAge
		if (rt.Keep <= 0 || i < rt.Keep) && !old || now.Sub(x.rec.UpdatedAt) < rt.Settle {
			continue
		}
		if r.holding(x.rec, !strings.Contains(x.stem, "@")) != "" {
			continue
		}
		rm, err := r.removeRun(x.rec, x.stem, !strings.Contains(x.stem, "@"), dry)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, rm)
	}
	return out, errs
}
