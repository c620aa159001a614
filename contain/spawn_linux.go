package contain

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/receipt"
)

// spawnReq asks the spawner thread to start one process.
type spawnReq struct {
	c     *Cmd
	ec    *exec.Cmd
	reply chan spawnResult
}

type spawnResult struct {
	err      error            // from exec.Cmd.Start, or from identifying the child
	h        *identity.Handle // the child, identified before anything can reap it
	how      string           // how placement was proven
	placeErr error
	// at is the clock read just before the clone. It is the main
	// process's start time in the receipt: the kernel's own start time is
	// in clock ticks since boot, and boot time is known to the second
	// only (/proc/stat btime), which put main.started_at up to a second
	// before the run's own started_at. The clone follows within the
	// preparation os/exec does in Start, microseconds.
	at time.Time
}

// spawner returns the queue of the one goroutine that starts every
// process. It is locked to its OS thread for the life of the program:
// Pdeathsig fires when the thread that forked the child exits, so a
// permanent thread keeps the signal tied to this process's death alone,
// without an OS thread per child.
var spawner = sync.OnceValue(func() chan<- spawnReq {
	ch := make(chan spawnReq)
	go func() {
		runtime.LockOSThread() // never unlocked
		for req := range ch {
			req.reply <- req.c.spawn(req.ec)
		}
	}()
	return ch
})

// spawn runs on the spawner thread. The child is registered as owned under
// the lock so the orphan sweep never sees it unregistered, and identified
// (and its placement proven) before Wait can reap it and free its pid.
func (c *Cmd) spawn(ec *exec.Cmd) spawnResult {
	back, err := c.joinV1()
	if err != nil {
		return spawnResult{err: err}
	}
	owned.Lock()
	at := time.Now()
	err = ec.Start()
	if err == nil {
		owned.pids[ec.Process.Pid] = true
	}
	owned.Unlock()
	if berr := back(); berr != nil && err == nil {
		// The spawner stays in the v1 leaves; the next spawn moves it
		// again, and rmdir of these leaves will report EBUSY.
		err = nil
		c.sys.v1Err = berr
	}
	if err != nil {
		return spawnResult{err: err}
	}
	r := spawnResult{at: at}
	r.h, r.err = identity.OpenChild(ec.Process.Pid)
	if r.err == nil {
		if r.err = identifyMain(r.h); r.err != nil {
			r.h.Close()
			r.h = nil
		}
	}
	if r.err != nil {
		// Unidentified, the fallback's walk cannot find it, and Start
		// returns an error: kill it now, through os.Process (a pidfd
		// since Go 1.23; unreaped, its pid cannot change hands).
		ec.Process.Kill()
		return r
	}
	if r.err == nil && c.leaf != nil {
		r.how, r.placeErr = c.verifyPlacement(r.h)
	}
	if r.placeErr != nil {
		r.h.Signal(syscall.SIGKILL)
	}
	return r
}

// identifyMain completes the main process's token; tests replace it to
// make identification fail.
var identifyMain = (*identity.Handle).Identify

// launch starts the process on the spawner thread and a goroutine that
// waits for it.
func (c *Cmd) launch(ec *exec.Cmd) error {
	reply := make(chan spawnResult, 1)
	spawner() <- spawnReq{c: c, ec: ec, reply: reply}
	res := <-reply
	c.releaseStartFD()
	c.closeChildEnds()
	if ec.Process == nil {
		return res.err
	}
	c.sys.exitCh = make(chan exitResult, 1)
	go func() {
		identity.AwaitChildExit(ec.Process.Pid) // in the poller: no thread held while the command runs
		st, werr := ec.Process.Wait()
		at := time.Now()
		owned.Lock()
		delete(owned.pids, ec.Process.Pid)
		owned.Unlock()
		c.sys.exitCh <- exitResult{state: st, err: werr, at: at}
	}()
	c.sys.proc = ec.Process
	if res.err != nil || res.h.Token.IsZero() {
		c.abortStarted(fmt.Errorf("contain: identify main process %d: %v", ec.Process.Pid, res.err))
		return errors.New(c.rec.Error)
	}
	c.sys.main = res.h
	c.rec.Main = &receipt.Process{PID: res.h.Token.PID, Token: res.h.Token.String(), Argv: append([]string(nil), c.Args...), StartedAt: res.at.UTC()}
	if res.placeErr != nil {
		c.abortStarted(res.placeErr)
		return res.placeErr
	}
	if c.leaf != nil {
		c.rec.Cgroup.Verified = res.how
	}
	return nil
}

// closeChildEnds closes our copies of the pipe ends handed to the child.
func (c *Cmd) closeChildEnds() {
	for _, f := range c.sys.childEnds {
		f.Close()
	}
	c.sys.childEnds = nil
}

// verifyPlacement proves the main process is in the leaf: by the pidfd's
// cgroup id where the kernel offers it, else by /proc/PID/cgroup. It runs
// before the process is reaped, while both still describe it.
func (c *Cmd) verifyPlacement(h *identity.Handle) (string, error) {
	in, viaProc := stop.InLeaf(c.leaf, h)
	how := "pidfd-cgroup-id"
	if viaProc {
		how = "proc-cgroup"
	}
	if !in {
		return "", fmt.Errorf("%w: pid %d is not in leaf %s (id %d), checked by %s", ErrPlacement, h.Token.PID, c.leaf.Path, c.leaf.ID, how)
	}
	return how, nil
}
