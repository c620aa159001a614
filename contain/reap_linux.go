package contain

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/procfs"
	"golang.org/x/sys/unix"
)

// children lists the calling process's children. Each thread has its own
// list (/proc/self/task/TID/children) and orphans are reparented to any
// thread of the subreaper, so every task is read.
func children() []int {
	tasks, _ := os.ReadDir("/proc/self/task")
	var pids []int
	for _, t := range tasks {
		b, err := procfs.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// hasChildren reports whether the calling process has any child, live or
// a zombie, of any of its threads: one waitid that reaps nothing (WNOWAIT,
// WNOHANG) fails with ECHILD only when there is none. After a run's main
// process is reaped that is the usual case, and the sweep of every
// thread's children list (three system calls a thread) is skipped. Any
// other answer, an error included, says there may be children.
func hasChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
	return err != unix.ECHILD
}

// orphanHandles returns handles to the children that os/exec does not own
// and that belong to the group according to member. A handle's token has
// only its pid: member calls Identify where its decision needs the rest
// (a child's pid cannot change hands before we reap it, so the pidfd is
// that child's either way). Reading the token is four system calls an
// orphan, and most decisions need none: the kernel reports the cgroup of
// a zombie through its pidfd (6.13+), and a program that starts no other
// children (AdoptOrphans) takes every orphan.
func orphanHandles(member func(*identity.Handle) bool) []*identity.Handle {
	if !hasChildren() {
		return nil
	}
	owned.Lock()
	var pids []int
	for _, pid := range children() {
		if !owned.pids[pid] {
			pids = append(pids, pid)
		}
	}
	owned.Unlock()
	var hs []*identity.Handle
	for _, pid := range pids {
		h, err := identity.OpenChild(pid)
		if err != nil {
			continue
		}
		if member(h) {
			hs = append(hs, h)
		} else {
			h.Close()
		}
	}
	return hs
}

// reapOrphans reaps the group's orphans until a pass finds none or deadline
// passes. Once the main process is reaped and no orphan of the group is
// left among our children, no member can remain: a member's children are
// reparented to us before the member itself becomes waitable. At the
// deadline it returns the tokens of the orphans of the group still
// running: members not confirmed gone, whatever a walk or the leaf said.
func (p *protocol) reapOrphans(deadline time.Time, member func(*identity.Handle) bool) (n int, running []string, err error) {
	for {
		hs := orphanHandles(member)
		if len(hs) == 0 {
			return n, nil, nil
		}
		running = running[:0]
		for _, h := range hs {
			if h.WaitExit(time.Until(deadline)) && h.Reap() == nil {
				n++
			} else if !h.Exited() && h.Identify() == nil {
				running = append(running, h.Token.String())
			}
			h.Close()
		}
		if time.Now().After(deadline) {
			return n, running, errors.New("contain: orphans still running at the kill-wait deadline")
		}
	}
}
