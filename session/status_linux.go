package session

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/par"

	"github.com/tether-run/tether/cgroup"
	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/internal/procfs"
	"github.com/tether-run/tether/registry"
)

// StatusOf reads the live facts of a session: supervisor and owner
// liveness through verified pidfds, and the leaf's counters (only after
// checking that the leaf is still the recorded one).
func StatusOf(rec *registry.Record) Status {
	s, _ := status(rec)
	return s
}

// StatusWithProcesses is StatusOf with the members listed.
func StatusWithProcesses(rec *registry.Record) Status {
	s, pids := status(rec)
	for _, pid := range pids {
		st, err := identity.ReadStat(pid)
		if err != nil {
			continue // gone meanwhile
		}
		argv := identity.Cmdline(pid)
		if len(argv) == 0 {
			argv = []string{"[" + st.Comm + "]"}
		}
		s.Processes = append(s.Processes, Proc{PID: pid, PPID: st.PPID, Argv: argv})
	}
	return s
}

// status is StatusOf, with the members' pids it read (none without a
// live leaf).
func status(rec *registry.Record) (Status, []int) {
	s := Status{Record: rec, State: rec.State, MemoryBytes: -1, AgeMS: time.Since(rec.CreatedAt).Milliseconds()}
	if _, err := os.Lstat(rec.RuntimeDir); err == nil {
		s.RuntimeDirExists = true
	}
	if !rec.Live() {
		s.EndedAt = rec.UpdatedAt
		return s, nil
	}
	if h, err := supervisorOf(rec); err == nil {
		h.Close()
		s.Supervised = true
	} else if rec.State != registry.StateStarting {
		s.State = "unsupervised"
	}
	if rec.OwnerToken != "" {
		alive := identity.Check(rec.OwnerToken) == nil
		s.OwnerAlive = &alive
	}
	if t, err := identity.Parse(rec.Main); err == nil && identity.Check(rec.Main) == nil {
		s.MainPID = t.PID
	}
	if rec.Cgroup == "" || !sameLeaf(rec.Cgroup, rec.CgroupID) {
		return s, nil
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
	return s, pids
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

// StatusOfAll is StatusOf for many records, in parallel: each one is a few
// independent system calls.
func StatusOfAll(recs []*registry.Record) []Status {
	out := make([]Status, len(recs))
	par.For(len(recs), func(i int) { out[i] = StatusOf(recs[i]) })
	return out
}
