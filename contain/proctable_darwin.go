package contain

import (
	"os"

	"github.com/tether-run/tether/internal/identity"
	"golang.org/x/sys/unix"
)

// macTable is macOS's process table (kern.proc.all) and identity.
type macTable struct{}

// token is e's mac token.
func (macTable) token(e tableEntry) identity.Token {
	boot, _ := identity.BootID()
	return identity.Token{OS: "mac", BootID: boot, PID: e.PID, StartTime: e.Start}
}

// table is a snapshot of every process.
func (macTable) table() ([]tableEntry, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, os.NewSyscallError("sysctl kern.proc.all", err)
	}
	out := make([]tableEntry, 0, len(kps))
	for i := range kps {
		p := &kps[i]
		st := p.Proc.P_starttime
		out = append(out, tableEntry{
			PID: int(p.Proc.P_pid), PPID: int(p.Eproc.Ppid), PGID: int(p.Eproc.Pgid),
			Start:  identity.MacStartTime(int64(st.Sec), int32(st.Usec)),
			Zombie: p.Proc.P_stat == sZomb,
		})
	}
	return out, nil
}

// sZomb is p_stat's SZOMB: the process has exited and awaits its reaper.
const sZomb = 5
