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
	Flags     uint64 // the kernel's PF_* flags word (field 9)
	StartTime uint64 // clock ticks after boot
}

// pfForkNoExec is the kernel's PF_FORKNOEXEC: the process was forked and
// has not completed an execve since (include/linux/sched.h; cleared in
// begin_new_exec, along with the new image's comm and exe).
const pfForkNoExec = 0x40

// Execed reports whether the process has completed an execve since its
// fork: its comm, /proc/PID/exe and cmdline are then its own program's,
// not its parent's. A parent's fork+exec returning is not proof of that:
// on Debian 13's kernel (6.12, under TCG) os/exec's Start returned with
// the child still showing the parent's image in 1 to 5 % of starts.
func (s Stat) Execed() bool { return s.Flags&pfForkNoExec == 0 }

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
	// Field 9 is rest[6].
	if st.Flags, err = strconv.ParseUint(rest[6], 10, 64); err != nil {
		return Stat{}, fmt.Errorf("identity: malformed flags in stat %q", truncate(s))
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
