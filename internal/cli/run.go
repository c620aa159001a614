package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/census"
	"github.com/tether-run/tether/internal/execpath"
	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
)

// runRun runs o's command contained, waits for it and what it left, and
// exits with its code.
func runRun(e *env, o *runOptions) error {
	p, err := o.plan()
	if ref := refusalOf(err); ref != nil && p != nil {
		return refuse(e, ref, receipt.NotRun("", o.argv, "", ""), p.out)
	}
	if err != nil {
		return exit(ExitTether, err)
	}
	o.prepare(e, o.mech, !o.spec.IsZero(), false, o.argv)
	p.prog = newProgress(e, o.quiet, max(o.grace, 0), "a second ^C kills at once")
	sigs := newSignalLog()
	defer sigs.close()
	c, err := p.start(e)
	if c == nil {
		return err
	}
	sigs.attach(c)
	if err != nil {
		r := c.Receipt()
		p.scratch.end(r, scratchKeep(r, 0))
		if ref := refusalOf(err); ref != nil {
			return refuse(e, ref, r, p.out)
		}
		werr := p.out.write(e, r)
		return exit(contain.StartErrorCode(err), errors.Join(startError(o.argv[0], err), werr))
	}
	warnStarted(e, o.quiet, c.Receipt())
	return p.finish(e, c, sigs)
}

// start starts the run's Cmd with a record in the state dir, or without
// one when the state dir cannot have it (not for a --pool member, which
// the pool counts by its record: a nil Cmd and an exitError then).
func (p *runPlan) start(e *env) (*contain.Cmd, error) {
	o := p.o
	reg := runRegistry(e, o, o.argv)
	if o.pool != "" && reg == nil {
		return nil, exit(ExitTether, fmt.Errorf("--pool %s: the pool is counted in the state dir's records, which this run has none in", o.pool))
	}
	c := p.command(e, reg)
	err := c.Start()
	if errors.Is(err, contain.ErrRecord) {
		// Nothing was created or started: the run goes on without one.
		if !o.quiet {
			e.warnf("no run record (tether reap cannot recover this run if tether dies): %v", err)
		}
		if o.pool != "" {
			// A member the pool cannot count would break its bound.
			return nil, exit(ExitTether, fmt.Errorf("--pool %s needs the state dir: %w", o.pool, err))
		}
		c = p.command(e, nil)
		err = c.Start()
	}
	return c, err
}

// runPlan is a run as its options resolved it, before anything starts.
type runPlan struct {
	o    *runOptions
	env  []string // the command's: o's, with the scratch dir's TMPDIR
	out  *receiptOut
	prog *progress
	// storage is the first census of each --storage-max ceiling.
	storage []receipt.Storage
	scratch *scratchDir
}

// plan opens the receipt's destination, admits the run (--require-free,
// --storage-max: a refusal returns p, for its receipt) and makes its
// scratch dir.
func (o *runOptions) plan() (p *runPlan, err error) {
	p = &runPlan{o: o}
	if o.receiptFD >= 0 {
		p.out, err = openReceiptFD(o.receiptFD)
	} else {
		p.out, err = openReceipt(o.receipt, o.receiptOverwrite)
	}
	if err != nil {
		return nil, err
	}
	if err = o.admit(); err != nil {
		return p, err
	}
	if p.storage, err = census.Admit(o.maxStorage); err != nil {
		return p, err
	}
	if p.scratch, err = newScratch(o.scratch); err != nil {
		p.out.cancel()
		return nil, err
	}
	p.env = p.scratch.environ(o.cmdEnv)
	return p, nil
}

// command is the run's contain.Cmd, recorded in reg (nil: no record).
func (p *runPlan) command(e *env, reg *store.Registry) *contain.Cmd {
	f := p.o
	c := contain.Command(f.argv[0], f.argv[1:]...)
	if p.env != nil {
		// Found on the PATH the command gets (-e PATH=…), not tether's.
		c.Path, c.Err = execpath.Look(f.argv[0], p.env, "")
		if c.Err != nil {
			c.Path = f.argv[0]
		}
	}
	c.Env, c.StopSignal = p.env, f.stopSig
	c.StopExec = f.stopExecArgv()
	c.Stdin, c.Stdout, c.Stderr = e.stdin, e.stdout, e.stderr
	c.Mechanism = f.mech
	c.CgroupParent = f.cgroupParent
	c.Timeout = f.timeout
	c.Grace = f.grace
	c.KillWait = f.killWait
	c.AdoptOrphans = true // tether run starts no other children
	c.Limits = f.spec
	c.BestEffortLimits = f.limitsMode == "best-effort"
	h := hooks.Hooks{Storage: p.storage}
	if reg != nil {
		c.StateDir, h.Store = reg.Dir, reg // opened once, for the quick reap too
		h.Pool, h.PoolMax, h.PoolWait = f.pool, f.max, f.poolWait
	}
	if f.receipt != "" && f.receipt != "-" {
		// Written by the watcher too, if tether dies (issue 24).
		h.WatchReceipt, _ = filepath.Abs(f.receipt) // the watcher runs in /
	}
	hooks.Set(c, h)
	if p.prog != nil {
		c.Progress = func(s receipt.Step) { p.prog.step("", s) }
	}
	return c
}

// warnStarted says on stderr what a started run does not have: a cgroup
// (the fallback), limits not applied; and, unless quiet, the limits that are.
func warnStarted(e *env, quiet bool, r *receipt.Receipt) {
	if r.FallbackReason != "" && !quiet {
		e.warnf("no usable cgroup v2 parent (%s); using the fallback: %s", r.FallbackReason, r.Caveats[0])
	}
	l := r.Limits
	if l == nil {
		return
	}
	for _, n := range l.NotApplied {
		e.warnf("limit not applied: --%s %s: %s", strings.ReplaceAll(n.Name, "_", "-"), n.Requested, n.Reason)
	}
	if !quiet && len(l.Applied) > 0 {
		var parts []string
		for _, a := range l.Applied {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", strings.ReplaceAll(a.Name, "_", "-"), a.Requested, a.Backend))
		}
		e.warnf("limits: %s", strings.Join(parts, ", "))
	}
}

// finish waits for the run's end and its stop, writes the receipt, and
// returns the exit: the main process's code; 128+n when tether was
// signalled to end; ExitTether when the stop was not confirmed or the
// receipt could not be written.
func (p *runPlan) finish(e *env, c *contain.Cmd, sigs *signalLog) error {
	f := p.o
	waitErr := c.Wait()
	sigs.close()
	p.prog.done("", c.Receipt(), false)
	r := c.Receipt()
	r.SignalsReceived = sigs.list()
	code := r.Exit.Code
	// A run tether was signalled to end exits 128+n even when the main
	// process, hit by the same terminal signal, exited first on its own.
	if first := sigs.first(); first != 0 && !r.TimedOut {
		code = 128 + int(first)
		r.Exit.Code = code
	}
	var msgs []error
	if errors.Is(waitErr, contain.ErrNotConfirmed) {
		code = ExitTether
		r.Exit.Code = code
		msgs = append(msgs, waitErr)
	}
	if p.scratch.end(r, scratchKeep(r, code)) && !f.quiet {
		e.warnf("scratch dir kept (%s): %s", r.Scratch.Kept, r.Scratch.Path)
	}
	if !f.quiet {
		summarize(e, r, p.prog.reported(""), p.out.path != "")
	}
	if err := p.out.write(e, r); err != nil {
		msgs = append(msgs, err)
		if code == 0 {
			code = ExitTether
		}
	}
	if code == 0 {
		return nil
	}
	return exit(code, errors.Join(msgs...))
}
