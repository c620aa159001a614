package session

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/procfs"
	"github.com/tether-run/tether/registry"
)

// groupFacts adds to s what the session's leaf says — its members, memory
// and CPU — once the leaf is proven the recorded one, and returns the
// members' pids (none without a live leaf).
func groupFacts(rec *registry.Record, s *Status) []int {
	if rec.Cgroup == "" || !sameLeaf(rec.Cgroup, rec.CgroupID) {
		return nil
	}
	pids := members(rec)
	s.Procs = len(pids)
	if b, err := procfs.ReadFile(filepath.Join(rec.Cgroup, "memory.current")); err == nil {
		s.MemoryBytes, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		s.MemorySource = "memory.current"
	} else if n, ok := v1Memory(rec); ok {
		s.MemoryBytes, s.MemorySource = n, "memory.usage_in_bytes"
	} else if len(pids) > 0 {
		s.MemoryBytes, s.MemorySource = pss(pids), "pss"
	}
	if b, err := procfs.ReadFile(filepath.Join(rec.Cgroup, "cpu.stat")); err == nil {
		if st, err := cgroup.ParseCPUStat(b); err == nil {
			s.CPUUsec = int64(st.UsageUsec)
		}
	}
	return pids
}

// describe lists pids with their parents and command lines; a process
// gone meanwhile is left out.
func describe(pids []int) []Proc {
	var out []Proc
	for _, pid := range pids {
		st, err := identity.ReadStat(pid)
		if err != nil {
			continue // gone meanwhile
		}
		argv := identity.Cmdline(pid)
		if len(argv) == 0 {
			argv = []string{"[" + st.Comm + "]"}
		}
		out = append(out, Proc{PID: pid, PPID: st.PPID, Argv: argv})
	}
	return out
}

// members lists the pids in a live session's leaf (none without one).
func members(rec *registry.Record) []int {
	if rec.Cgroup == "" || !rec.Live() || !sameLeaf(rec.Cgroup, rec.CgroupID) {
		return nil
	}
	b, err := procfs.ReadFile(filepath.Join(rec.Cgroup, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// v1Memory reads the v1 memory leaf tether created for the session's
// limits on a hybrid host.
func v1Memory(rec *registry.Record) (int64, bool) {
	for _, dir := range rec.V1Cgroups {
		b, err := procfs.ReadFile(filepath.Join(dir, "memory.usage_in_bytes"))
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// pss sums the members' proportional set sizes: shared pages are divided
// among the processes that map them, so the sum does not count a page
// twice (as a sum of RSS would).
func pss(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		b, err := procfs.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
		if err != nil {
			continue // a kernel thread, or gone
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "Pss:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				total += kb << 10
				break
			}
		}
	}
	return total
}

func sameLeaf(path string, id uint64) bool {
	var st syscall.Stat_t
	return syscall.Stat(path, &st) == nil && st.Ino == id
}

// Inside reports whether the calling process runs inside rec's leaf, by
// its real cgroup membership.
func Inside(rec *registry.Record) bool {
	if rec.Cgroup == "" || !sameLeaf(rec.Cgroup, rec.CgroupID) {
		return false
	}
	m, err := cgroup.Mount()
	if err != nil {
		return false
	}
	self, err := cgroup.Self(0)
	if err != nil {
		return false
	}
	dir := filepath.Join(m, self)
	return dir == rec.Cgroup || strings.HasPrefix(dir, rec.Cgroup+"/")
}
