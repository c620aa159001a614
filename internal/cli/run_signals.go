package cli

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// signalName names the signals tether handles, portably.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return sig.String()
}

// signalLog turns SIGINT, SIGTERM and SIGHUP into the stop protocol: the
// first begins it, the second skips the grace, the rest are absorbed.
// Signals are caught from before the Cmd exists; what arrived before
// attach is applied to the Cmd there.
type signalLog struct {
	mu   sync.Mutex
	c    *contain.Cmd
	ch   chan os.Signal
	got  []receipt.Signal
	sig1 syscall.Signal
	done chan struct{}
	once sync.Once
}

func newSignalLog() *signalLog {
	s := &signalLog{ch: make(chan os.Signal, 8), done: make(chan struct{})}
	signal.Notify(s.ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		for {
			select {
			case <-s.done:
				return
			case sig := <-s.ch:
				s.handle(sig.(syscall.Signal))
			}
		}
	}()
	return s
}

func (s *signalLog) handle(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	action := "absorbed"
	switch len(s.got) {
	case 0:
		action, s.sig1 = "stop", sig
	case 1:
		action = "skip-grace"
	}
	s.got = append(s.got, receipt.Signal{Name: signalName(sig), At: time.Now().UTC(), Action: action})
	if s.c != nil {
		apply(s.c, action)
	}
}

// attach makes c the Cmd the signals stop, applying those already caught.
func (s *signalLog) attach(c *contain.Cmd) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c = c
	for _, g := range s.got {
		apply(c, g.Action)
	}
}

func apply(c *contain.Cmd, action string) {
	switch action {
	case "stop":
		c.BeginStop(contain.ReasonSignal)
	case "skip-grace":
		c.Kill()
	}
}

// close stops recording. Signals that arrive after cleanup ended are left
// to the default action only once Main returns; until then they queue.
func (s *signalLog) close() {
	s.once.Do(func() { close(s.done) })
}

func (s *signalLog) list() []receipt.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]receipt.Signal(nil), s.got...)
}

func (s *signalLog) first() syscall.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig1
}

// runRegistry is the registry the run keeps its record in, so that
// `tether reap` can recover the run if tether dies, after a quick reap of
// what provably dead runs left. Without a usable state directory, or with
// a command line too long for a record (which a record written anyway
// would make unreadable: issue 22), the run goes on without a record,
// and says so.
func runRegistry(e *env, f *runOptions, argv []string) *store.Registry {
	if !runRecords {
		return nil
	}
	noRecord := func(err error) *store.Registry {
		if !f.quiet {
			e.warnf("no run record (tether reap cannot recover this run if tether dies): %v", err)
		}
		return nil
	}
	cwd, _ := os.Getwd() // as contain.Cmd records it
	if err := store.CheckSize(&registry.Record{Kind: "run", State: registry.StateRunning, Argv: argv, Cwd: cwd}); err != nil {
		return noRecord(err)
	}
	reg, err := openRegistry(e)
	if err != nil {
		return noRecord(err)
	}
	quickReap(e, reg, f.noReap)
	return reg
}
