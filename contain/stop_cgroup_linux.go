package contain

import (
	"errors"
	"fmt"
	"time"

	"github.com/tether-run/tether/internal/crash"
	"github.com/tether-run/tether/receipt"

	"github.com/tether-run/tether/identity"
	"golang.org/x/sys/unix"
)

// runCgroup is the stop protocol for a cgroup leaf: SIGTERM every member
// through a verified pidfd, wait the grace for populated 0, cgroup.kill,
// wait for populated 0, reap, remove the leaf.
func (p *protocol) runCgroup() {
	leaf := p.c.leaf
	pids, err := leaf.Procs()
	var unopened int
	var openErr error
	for _, pid := range pids {
		h, oerr := p.openMember(pid)
		if oerr != nil {
			// Out of fds (EMFILE) most likely: such a member gets no
			// SIGTERM, only the cgroup.kill after the grace.
			unopened++
			openErr = oerr
			continue
		}
		if h != nil && p.admit(h) {
			p.term(h)
		}
	}
	if unopened > 0 && err == nil {
		err = fmt.Errorf("%d members could not be opened, so were not sent SIGTERM: %w", unopened, openErr)
	}
	p.step("term", fmt.Sprintf("%d members in cgroup.procs; SIGTERM sent to %d", len(pids), p.ev.Signalled), len(pids), err)
	crash.Point("stop-after-term")

	empty := len(pids) == 0 && err == nil
	if empty {
		empty, _ = leaf.WaitEmpty(0)
	}
	if !empty {
		empty = p.graceWait()
	}
	if !empty {
		p.ev.KillUsed = true
		crash.Point("stop-before-kill")
		began := time.Now()
		err := leaf.Kill()
		p.stepFrom(began, "kill", "wrote 1 to cgroup.kill", 0, err)
		empty, err = leaf.WaitEmpty(p.killWait())
		obs := "populated 0"
		if !empty {
			obs = fmt.Sprintf("still populated after %s", p.killWait())
		}
		p.step("kill-wait", obs, 0, err)
	}
	if empty {
		p.ev.Empty, p.ev.EmptyBy, p.ev.EmptyAt = true, "cgroup.events populated 0", time.Now().UTC()
	}

	crash.Point("stop-before-reap")
	deadline := time.Now().Add(p.killWait())
	mainOK := p.awaitMain(deadline)
	reaped, rerr := p.reapOrphans(deadline, p.inLeaf)
	p.ev.Reaped = reaped
	p.confirm()
	p.step("reap", fmt.Sprintf("main reaped: %t; %d orphans reaped; %d members confirmed gone, %d not", mainOK, reaped, p.ev.ConfirmedGone, len(p.ev.Unconfirmed)), 0, rerr)

	if cpu, err := leaf.CPU(); err == nil {
		p.cpu = &receipt.CPU{UsageUsec: cpu.UsageUsec, UserUsec: cpu.UserUsec, SystemUsec: cpu.SystemUsec}
	}
	if !empty {
		// Removing a populated leaf fails; keep it (and its fd closed) so
		// that reap can find it by its recorded id.
		leaf.Close()
		p.step("remove", "leaf kept: still populated", 0, errors.New("leaf not empty"))
		return
	}
	p.finishLimits()
	crash.Point("stop-before-rmdir")
	err = leaf.Remove()
	if err != nil {
		leaf.Close()
	}
	p.ev.LeafRemoved = err == nil
	p.step("remove", "rmdir "+leaf.Path, 0, err)
	if err == nil {
		if rerr := p.c.sys.budget.Restore(); rerr != nil {
			p.step("restore", "disable the controllers enabled for the leaf in its parent", 0, rerr)
		}
	}
}

// graceWait waits up to the grace period for populated 0, in short slices
// so that Kill can cut it short.
func (p *protocol) graceWait() bool {
	g := p.grace()
	if g == 0 {
		p.step("grace", "no grace period", 0, nil)
		return false
	}
	began := time.Now()
	for {
		if p.skipped() {
			p.step("grace", "cut short by a second stop request", 0, nil)
			return false
		}
		left, ng, changed := p.graceLeft(began, g)
		if left <= 0 {
			p.step("grace", graceOver(ng, changed, "still populated"), 0, nil)
			return false
		}
		empty, err := p.c.leaf.WaitEmpty(min(left, 25*time.Millisecond))
		if err != nil {
			p.step("grace", "cannot watch cgroup.events", 0, err)
			return false
		}
		if empty {
			p.step("grace", "populated 0: every member exited after SIGTERM", 0, nil)
			return true
		}
	}
}

// openMember opens a pidfd for pid and proves it is in our leaf. The proof
// is the pidfd's cgroup id (Linux 6.13+), else /proc/PID/cgroup read after
// the pidfd was opened and while the process was still alive.
// A member that is gone, or not ours, is (nil, nil); an error is a
// member that could not be opened for lack of file descriptors.
func (p *protocol) openMember(pid int) (*identity.Handle, error) {
	h, err := identity.OpenPID(pid)
	if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
		return nil, err
	}
	if err != nil {
		return nil, nil
	}
	if !p.inLeaf(h) {
		h.Close()
		return nil, nil
	}
	return h, nil
}

// inLeaf reports whether h's process is (or, as a zombie, was) in the leaf.
func (p *protocol) inLeaf(h *identity.Handle) bool {
	id, err := h.CgroupID()
	if err == nil {
		return id == p.c.leaf.ID
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		return false
	}
	path, err := procCgroupPath(h.Token.PID)
	return err == nil && path == p.c.leaf.Path
}
