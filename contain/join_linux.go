package contain

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
)

// Member is a process Join started in a running group.
type Member struct {
	token identity.Token // the member's identity (boot id, pid, start time)
	ec    *exec.Cmd
	exit  chan exitResult
}

// Join starts ec as one more member of the running group: cloned into its
// leaf, in a session of its own, with the limits of the group (hybrid
// hosts' v1 leaves included). It is how a session's supervisor runs
// `tether exec`. The member is reaped by Member.Wait, never by the
// orphan sweep; what it starts belongs to the group like anything else,
// and the group's stop stops it.
//
// ec.SysProcAttr's Setctty and Ctty are kept (a member whose stdin is a
// terminal takes it as its controlling terminal, as `tether exec -t`
// asks); Join sets the rest itself.
//
// It fails with ErrNoJoin when the group has no leaf (the fallback
// mechanism proves members by descent from the main process, which a
// joined process is not) or its stop has begun.
func (c *Cmd) Join(ec *exec.Cmd) (*Member, error) {
	c.mu.Lock()
	started, stopping := c.started, c.stopping
	c.mu.Unlock()
	switch {
	case !started:
		return nil, ErrNotStarted
	case c.leaf == nil:
		return nil, fmt.Errorf("%w: it has no cgroup (the %s mechanism)", ErrNoJoin, receipt.MechanismFallback)
	case stopping:
		return nil, fmt.Errorf("%w: its stop has begun", ErrNoJoin)
	}
	// The leaf's read lock is held until the member is placed: a kill
	// cannot begin in between (the stop would then miss it).
	fd, release, err := c.leaf.StartFD()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoJoin, err)
	}
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true, UseCgroupFD: true, CgroupFD: fd}
	if ec.SysProcAttr != nil && ec.SysProcAttr.Setctty {
		attr.Setctty, attr.Ctty = true, ec.SysProcAttr.Ctty
	}
	ec.SysProcAttr = attr
	reply := make(chan spawnResult, 1)
	spawner() <- spawnReq{c: c, ec: ec, reply: reply}
	res := <-reply
	release()
	if ec.Process == nil {
		return nil, res.err
	}
	m := &Member{ec: ec, exit: make(chan exitResult, 1)}
	go func() {
		st, werr := ec.Process.Wait()
		owned.Lock()
		delete(owned.pids, ec.Process.Pid)
		owned.Unlock()
		m.exit <- exitResult{state: st, err: werr}
	}()
	if res.h != nil {
		m.token = res.h.Token
		res.h.Close()
	}
	if err := firstErr(res.err, res.placeErr); err != nil {
		// spawn killed it already; reap it before saying so.
		m.Wait()
		return nil, err
	}
	return m, nil
}

// Wait waits for the member to exit and reaps it; it returns how it
// ended, as a receipt records the main process's exit.
func (m *Member) Wait() receipt.Exit {
	ex := <-m.exit
	m.exit <- ex
	return exitOf(&ex)
}

// Signal sends sig to the member unless it has been reaped.
func (m *Member) Signal(sig os.Signal) error { return m.ec.Process.Signal(sig) }

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
