package session

import (
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/registry"
)

// groupFacts adds to s what the session's job says — its processes,
// their commit charge and CPU time — read through the job's name
// while its supervisor, which created the job and holds it, is proven
// alive before and after, and returns the pids in it.
func groupFacts(rec *registry.Record, s *Status) []int {
	u, ok := jobUsage(rec, s.Supervised)
	if !ok {
		return nil
	}
	s.Procs, s.CPUUsec = u.Processes, u.CPU.Microseconds()
	s.MemoryBytes, s.MemorySource = u.CommitBytes, "commit charge"
	return u.PIDs
}

// describe lists pids with their parents and images, from one process
// snapshot (Toolhelp32); a process gone meanwhile is left out. Windows
// gives another process's command line only through its memory: argv is
// the image's full path, else its file name.
func describe(pids []int) []Proc {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil
	}
	defer windows.CloseHandle(snap)
	type entry struct {
		ppid int
		exe  string
	}
	all := map[int]entry{}
	var pe windows.ProcessEntry32
	pe.Size = uint32(unsafe.Sizeof(pe))
	for err = windows.Process32First(snap, &pe); err == nil; err = windows.Process32Next(snap, &pe) {
		all[int(pe.ProcessID)] = entry{int(pe.ParentProcessID), windows.UTF16ToString(pe.ExeFile[:])}
	}
	var out []Proc
	for _, pid := range pids {
		e, ok := all[pid]
		if !ok {
			continue
		}
		argv := []string{e.exe}
		if h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid)); err == nil {
			buf := make([]uint16, windows.MAX_LONG_PATH)
			n := uint32(len(buf))
			if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) == nil {
				argv = []string{windows.UTF16ToString(buf[:n])}
			}
			windows.CloseHandle(h)
		}
		out = append(out, Proc{PID: pid, PPID: e.ppid, Argv: argv})
	}
	return out
}

// jobUsage reads rec's job, if its supervisor is alive (supervised: seen
// alive just before) and still alive after the read.
func jobUsage(rec *registry.Record, supervised bool) (hooks.JobUsage, bool) {
	if !supervised || rec.RunID == "" {
		return hooks.JobUsage{}, false
	}
	u, err := hooks.ReadJobUsage(rec.RunID)
	if err != nil || identity.Check(rec.Supervisor) != nil {
		return hooks.JobUsage{}, false
	}
	return u, true
}

// Inside reports whether the calling process runs in rec's job.
func Inside(rec *registry.Record) bool {
	u, ok := jobUsage(rec, rec.Live() && identity.Check(rec.Supervisor) == nil)
	return ok && u.Inside
}
