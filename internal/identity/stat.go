package identity

import (
	"fmt"
	"strconv"
	"strings"
)

// Stat is the part of /proc/PID/stat that tether uses.
type Stat struct {
	PID       int
	Comm      string
	State     byte // R, S, D, Z, T, ...
	PPID      int
	PGID      int
	SID       int
	StartTime uint64 // clock ticks after boot
}

// ParseStat parses the contents of /proc/PID/stat. The command name is
// enclosed in parentheses and may itself contain spaces and ')', so fields
// are counted from the last ')'.
// A pid below 1 is malformed: no process has one.
func ParseStat(b []byte) (Stat, error) {
	s := string(b)
	open := strings.IndexByte(s, '(')
	close := strings.LastIndexByte(s, ')')
	if open < 1 || close < open {
		return Stat{}, fmt.Errorf("identity: malformed stat %q", truncate(s))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil || pid < 1 {
		return Stat{}, fmt.Errorf("identity: malformed pid in stat %q", truncate(s))
	}
	// Fields after the comm start at field 3 (state).
	rest := strings.Fields(s[close+1:])
	if len(rest) < 20 {
		return Stat{}, fmt.Errorf("identity: short stat %q", truncate(s))
	}
	st := Stat{PID: pid, Comm: s[open+1 : close], State: rest[0][0]}
	ints := []*int{&st.PPID, &st.PGID, &st.SID}
	for i, p := range ints {
		if *p, err = strconv.Atoi(rest[1+i]); err != nil {
			return Stat{}, fmt.Errorf("identity: malformed field %d in stat %q", 4+i, truncate(s))
		}
	}
	// Field 22 is rest[19].
	if st.StartTime, err = strconv.ParseUint(rest[19], 10, 64); err != nil {
		return Stat{}, fmt.Errorf("identity: malformed start time in stat %q", truncate(s))
	}
	return st, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
