package identity

import (
	"fmt"
	"time"
)

// macOS tokens are mac:BOOT:PID:START, BOOT being kern.bootsessionuuid and
// START the process's start time from kern.proc.pid (kinfo_proc's
// p_starttime) in microseconds since the Unix epoch. The parts below are
// the decisions, kept free of darwin's system calls so that they are
// tested on every system.

// macProc is what kern.proc.pid reports of one process.
type macProc struct {
	PID       int
	StartSec  int64
	StartUsec int32
	Stat      int8 // p_stat: SIDL 1, SRUN 2, SSLEEP 3, SSTOP 4, SZOMB 5
}

// macZombie is p_stat's SZOMB: the process has exited.
const macZombie = 5

// macToken is the token of p, read on the boot boot. A zombie is ErrGone:
// it has exited, as on Linux. A record without a start time is not a
// process tether can name.
func macToken(boot string, p macProc) (Token, error) {
	switch {
	case p.PID <= 0:
		return Token{}, fmt.Errorf("%w: no process", ErrGone)
	case p.Stat == macZombie:
		return Token{}, fmt.Errorf("%w: pid %d has exited", ErrGone, p.PID)
	case p.StartSec <= 0 || p.StartUsec < 0 || p.StartUsec >= 1e6:
		return Token{}, fmt.Errorf("identity: pid %d: start time %d.%06d is not one", p.PID, p.StartSec, p.StartUsec)
	}
	return Token{OS: "mac", BootID: boot, PID: p.PID, StartTime: MacStartTime(p.StartSec, p.StartUsec)}, nil
}

// MacStartTime is a mac token's start time for kinfo_proc's p_starttime
// (seconds and microseconds): microseconds since the Unix epoch.
func MacStartTime(sec int64, usec int32) uint64 { return uint64(sec)*1e6 + uint64(usec) }

// macStartedAt is the wall-clock start of a mac token's process.
func macStartedAt(t Token) time.Time {
	if t.OS != "mac" || t.StartTime == 0 {
		return time.Time{}
	}
	return time.UnixMicro(int64(t.StartTime)).UTC()
}
