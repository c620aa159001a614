package contain

import (
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/stop"
	"github.com/tether-run/tether/receipt"
)

// watch walks the process table until the run ends, so that members are
// known before their parents leave them: at once when a member forks
// (kqueue EVFILT_PROC NOTE_FORK on every member found), and every
// watchEvery in any case.
func (c *Cmd) watch() {
	kq, err := unix.Kqueue()
	if err != nil {
		kq = -1 // walks on the timer alone
	} else {
		defer unix.Close(kq)
	}
	watched := map[identity.Token]bool{}
	ev := make([]unix.Kevent_t, 16)
	for {
		select {
		case <-c.done:
			return
		default:
		}
		members, _ := c.sys.group.walk()
		if kq < 0 {
			time.Sleep(watchEvery)
			continue
		}
		for _, t := range members {
			if !watched[t] {
				watched[t] = true
				k := make([]unix.Kevent_t, 1)
				unix.SetKevent(&k[0], t.PID, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_CLEAR)
				k[0].Fflags = unix.NOTE_FORK | unix.NOTE_EXIT
				unix.Kevent(kq, k, nil, nil) // one at a time: a member gone meanwhile fails alone (ESRCH)
			}
		}
		ts := unix.NsecToTimespec(int64(watchEvery))
		unix.Kevent(kq, nil, ev, &ts) // a fork or an exit, or the time is up
	}
}

// supervise waits for the run to end (main exit, timeout or Stop), runs
// the stop protocol, and completes the receipt.
func (c *Cmd) supervise() {
	defer close(c.done)
	reason := c.awaitEnd()
	p := &pgroupProtocol{Log: c.stopLog(), g: c.sys.group, awaitMain: c.awaitMain}
	var strag []receipt.Process
	nstrag := 0
	if reason == ReasonMainExit {
		p.straggler = func(t identity.Token) {
			if t == c.sys.main {
				return
			}
			nstrag++
			if len(strag) < receipt.MaxListed {
				strag = append(strag, *c.processRecord(t))
			}
		}
	}
	p.run(c.policy())
	c.awaitCopies()
	c.endStorage()
	c.finish(p, reason, strag, nstrag)
	c.track.finish(&c.rec, c.waitErr)
}

// groupEmpty reports whether a walk finds no member.
func (c *Cmd) groupEmpty() bool {
	m, err := c.sys.group.walk()
	return err == nil && len(m) == 0
}

// emptyWake is nil on macOS: waitEmpty walks on its tick.
func (c *Cmd) emptyWake() <-chan struct{} { return nil }

// finish fills in how the run ended.
func (c *Cmd) finish(p *pgroupProtocol, reason Reason, strag []receipt.Process, nstrag int) {
	c.exe.wait() // before the lock: Receipt() does not wait for a hash
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &c.rec
	c.exe.into(r)
	r.Stop = receipt.Stop{Reason: string(reason), Signal: stop.SignalName(c.StopSignal), Steps: p.Steps}
	r.Stragglers, r.StragglersTotal = strag, nstrag
	r.TimedOut = reason == ReasonTimeout
	p.Evidence.MainReaped = c.sys.exit != nil && c.sys.exit.err == nil
	r.Evidence = p.Evidence
	r.StopConfirmed = p.Evidence.Empty && p.Evidence.MainReaped && len(p.Evidence.Unconfirmed) == 0
	if c.sys.stdinW != nil {
		c.sys.stdinW.Close()
	}
	r.Exit = exitOf(c.sys.exit)
	r.Exit.Code = endCode(Reason(r.Stop.Reason), r.Exit)
	if c.sys.exit != nil {
		c.sys.state = c.sys.exit.state
	}
	r.EndedAt = time.Now().UTC()
	r.DurationMS = r.EndedAt.Sub(r.StartedAt).Milliseconds()
	c.waitErr = waitError(r, c.sys.state)
}
