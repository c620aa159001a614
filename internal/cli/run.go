package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/census"
	"github.com/tether-run/tether/internal/execpath"
	"github.com/tether-run/tether/internal/hooks"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// runFlags are tether run's flags as given.
type runFlags struct {
	timeout  time.Duration
	grace    time.Duration
	killWait time.Duration
	receipt  string
	// receiptOverwrite lets --receipt replace an existing file.
	receiptOverwrite bool
	// receiptFD is --receipt-fd: a descriptor the caller opened (-1: none).
	receiptFD int
	require   string
	// pool, max and poolWait are --pool, --max and --pool-wait.
	pool     string
	max      int
	poolWait time.Duration
	containFlags
	commandFlags
	quiet   bool
	noReap  bool
	scratch bool

	limitFlags
}

// runOptions is `tether run` as its flags and arguments resolved it:
// the flags as given (--grace 0 as contain.NoGrace), and what check
// made of them.
type runOptions struct {
	runFlags
	argv       []string
	mech       receipt.Mechanism
	spec       limits.Spec
	maxStorage []limits.Storage // --storage-max
	stopSig    syscall.Signal
	cmdEnv     []string // nil: tether's own environment as it is
}

func newRunCmd(e *env) *cobra.Command { return newRunCmdRun(e, runRun) }

// newRunCmdRun is newRunCmd with run called on the parsed options.
func newRunCmdRun(e *env, run func(*env, *runOptions) error) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARG...]",
		Short: "Run a command and stop everything it started when it ends",
		Long: `Run COMMAND in a fresh cgroup v2 leaf (entered before exec), wait for it, then
stop whatever it left behind: the stop signal (--signal, SIGTERM by
default) to every member, --grace to exit, then cgroup.kill, until the kernel reports the leaf empty and every member
is reaped. The leaf is removed and a receipt records the evidence.

The run ends when the main process exits, when --timeout expires, or when
tether receives SIGINT, SIGTERM or SIGHUP. A second such signal skips the
grace period; further ones are ignored until cleanup is done.

Without a writable cgroup v2 parent, tether falls back to subreaper +
process group + parent-death signal and says what that cannot guarantee;
--require cgroup refuses instead.

--receipt FILE is created before the command starts and never replaces an
existing file (a symlink included) unless --receipt-overwrite is given.
--receipt-fd N writes it to a descriptor the caller opened, apart from the
command's output (tether run --receipt-fd 3 -- make 3>&1 >&2 | jq .), and
the command does not inherit it; if tether itself is killed, only
--receipt FILE gets the receipt its watcher writes.
The command gets TETHER_RUN_ID, the receipt's run_id.

--storage-max PATH=SIZE takes a census of the regular files under PATH
(symlinks never followed) before the start, every second, and at the end:
more than SIZE stops the group (stop reason storage, exit 153), as does a
census that cannot complete. --scratch gives the command a fresh 0700
TMPDIR under $TMPDIR, removed when the run exits 0, kept otherwise.

A refusal before anything starts (--require-free not met, a limit
--limits strict cannot apply, a --storage-max ceiling already crossed or
not checkable) exits 125 with "refused (REASON)" and leaves a receipt
with "outcome": "not_run", in --receipt FILE and in the state dir.

Exit status: the command's own; 128+n if it died of signal n, or if tether
was stopped by signal n; 124 on timeout (137 if the main process had to be
killed after the grace, as timeout -k says); 153 when stopped at a storage
ceiling (128+SIGXFSZ); 125 if tether failed or refused to start
(including bad usage, or a stop it could not confirm); 126 if the command
could not be executed; 127 if it was not found.`,
		Example: `  tether run --timeout 20m --receipt run.json -- npm run e2e
  tether run --timeout 5 --grace 0.5 -- ./flaky-server   # bare numbers are seconds
  tether run --signal INT -e NODE_ENV=test --env-file ci.env -- npm test
  tether run --receipt - -- sh -c 'setsid sleep 1000 & echo started'
  tether run --receipt-fd 3 -- make test 3>run.json
  tether run --storage-max ./out=2G --scratch -- ./build`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("missing COMMAND: usage: tether run [flags] -- COMMAND [ARG...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(e, args); err != nil {
				return exit(ExitTether, err)
			}
			return run(e, &o)
		},
	}
	o.register(cmd)
	return cmd
}

// register adds run's flags to cmd.
func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	durationVar(fl, &f.timeout, "timeout", 0, "stop the run after this long and exit 124, or 137 if the kill was needed (0: no timeout)")
	durationVar(fl, &f.grace, "grace", contain.DefaultGrace, "time members get after the stop signal before cgroup.kill")
	durationVar(fl, &f.killWait, "kill-wait", contain.DefaultKillWait, "bound on the wait for emptiness after the kill")
	fl.StringVar(&f.receipt, "receipt", "", "write the JSON receipt to `FILE` (- for stdout), also when the command fails to start; an existing FILE is refused")
	fl.BoolVar(&f.receiptOverwrite, "receipt-overwrite", false, "let --receipt replace an existing FILE")
	intVarP(fl, &f.receiptFD, "receipt-fd", "", -1, "write the JSON receipt to file descriptor `N` the caller opened (3>run.json, or 3>&1 >&2 to pipe it apart from the command's stdout); the command does not inherit it")
	cmd.MarkFlagsMutuallyExclusive("receipt", "receipt-fd")
	f.containFlags.register(fl, "cgroup v2 `DIR` to create the run's leaf in (default $TETHER_CGROUP_PARENT, else tether's own cgroup)")
	fl.StringVar(&f.require, "require", "", "fail (exit 125) unless this containment is available: cgroup")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing of tether's own but errors")
	f.limitFlags.register(fl)
	f.commandFlags.register(cmd)
	fl.BoolVar(&f.scratch, "scratch", false, "give the command a private scratch dir (0700, under $TMPDIR) as its TMPDIR: removed when the run exits 0, kept and named otherwise")
	fl.StringVar(&f.pool, "pool", "", "run as a member of pool `NAME`, which sessions (tether start --pool) may share")
	intVarP(fl, &f.max, "max", "", 0, "with --pool: at most N live members (runs and sessions) at once; past it, wait --pool-wait, then refuse")
	durationVar(fl, &f.poolWait, "pool-wait", 0, "with --max: how long to wait for a slot before refusing (0: refuse at once)")
	fl.BoolVar(&f.noReap, "no-reap", false, "do not reclaim provably dead runs and sessions first (also TETHER_NO_REAP=1)")
}

// check checks the flags and resolves them and args into o: the
// mechanism, the budget, the storage ceilings, the stop signal and the
// command's environment (--env-file read). Every error is a usage error.
func (o *runOptions) check(e *env, args []string) (err error) {
	o.argv = args
	if o.mech, err = o.validate(e); err != nil {
		return err
	}
	if o.spec, err = o.budget(); err != nil {
		return err
	}
	if o.maxStorage, err = o.ceilings(); err != nil {
		return err
	}
	if o.stopSig, err = o.stopSignal(); err != nil {
		return err
	}
	if o.cmdEnv, _, err = o.environ(os.Environ()); err != nil {
		return err
	}
	if o.grace == 0 {
		o.grace = contain.NoGrace
	}
	return nil
}

func (f *runFlags) validate(e *env) (receipt.Mechanism, error) {
	mech, err := f.resolve(e)
	if err != nil {
		return "", err
	}
	switch f.require {
	case "":
	case "cgroup":
		if mech == receipt.MechanismFallback {
			return "", errors.New("--require cgroup contradicts --mechanism fallback")
		}
		mech = receipt.MechanismCgroup
	default:
		return "", fmt.Errorf("--require %q: the only requirement is cgroup", f.require)
	}
	if f.timeout < 0 || f.grace < 0 || f.killWait < 0 {
		return "", errors.New("--timeout, --grace and --kill-wait must not be negative")
	}
	if f.killWait == 0 {
		return "", errors.New("--kill-wait must be positive: it bounds the wait for the kernel to empty the group")
	}
	if f.cgroupParent != "" && !filepath.IsAbs(f.cgroupParent) {
		return "", fmt.Errorf("cgroup parent %q: must be an absolute path in the cgroup v2 hierarchy", f.cgroupParent)
	}
	if (f.max != 0 || f.poolWait != 0) && f.pool == "" {
		return "", errors.New("--max and --pool-wait need --pool")
	}
	if f.max < 0 || f.poolWait < 0 {
		return "", errors.New("--max and --pool-wait must not be negative")
	}
	if f.pool != "" {
		if err := registry.CheckPool(f.pool); err != nil {
			return "", err
		}
	}
	if f.receiptFD != -1 && f.receiptFD < 3 {
		return "", fmt.Errorf("--receipt-fd %d: give a descriptor of 3 or more (0, 1 and 2 are the command's; --receipt - is stdout)", f.receiptFD)
	}
	if f.receiptOverwrite && f.receipt == "" {
		return "", errors.New("--receipt-overwrite needs --receipt FILE")
	}
	if f.receipt != "" && f.receipt != "-" {
		dir := filepath.Dir(f.receipt)
		st, err := os.Stat(dir)
		if err != nil {
			return "", fmt.Errorf("--receipt %q: directory %q: %w", f.receipt, dir, errors.Unwrap(err))
		}
		if !st.IsDir() {
			return "", fmt.Errorf("--receipt %q: %q is not a directory", f.receipt, dir)
		}
		if !dirWritable(dir) {
			return "", fmt.Errorf("--receipt %q: directory %q is not writable", f.receipt, dir)
		}
		if st, err := os.Stat(f.receipt); err == nil && st.IsDir() {
			return "", fmt.Errorf("--receipt %q: is a directory; give a file name", f.receipt)
		}
	}
	return mech, nil
}

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

func startError(name string, err error) error {
	switch contain.StartErrorCode(err) {
	case ExitNotFound:
		return fmt.Errorf("%s: command not found: %w", name, err)
	case ExitNotExec:
		return fmt.Errorf("%s: cannot execute: %w", name, err)
	}
	return fmt.Errorf("cannot start %s: %w", name, err)
}

// stragglersText names what the main process left, the first few by
// their commands, and where the rest of the evidence is.
func stragglersText(r *receipt.Receipt, kept bool) string {
	var names []string
	for i, p := range r.Stragglers {
		if i == 3 {
			names = append(names, "…")
			break
		}
		names = append(names, fmt.Sprintf("%d %s", p.PID, commandText(p.Argv, 40)))
	}
	where := "--receipt FILE keeps the evidence"
	if kept {
		where = "see the receipt"
	}
	return strings.Join(names, ", ") + " (" + where + ")"
}

// summarize tells the user on stderr what tether had to do beyond waiting;
// whether the kill was needed only when the progress report has not said
// so already.
func summarize(e *env, r *receipt.Receipt, reported, kept bool) {
	if r.Exit.OOMKilled {
		e.warnf("main process was OOM-killed: the group hit its memory limit (%d OOM kills)", r.Limits.Outcome.OOMKills)
	} else if r.Limits != nil && r.Limits.Outcome != nil && r.Limits.Outcome.OOMKills > 0 {
		e.warnf("the OOM killer killed %d processes of the group", r.Limits.Outcome.OOMKills)
	}
	if r.Limits != nil && r.Limits.Outcome != nil && r.Limits.Outcome.PidsLimitHits > 0 {
		e.warnf("the group hit its pids limit %d times (forks failed)", r.Limits.Outcome.PidsLimitHits)
	}
	if r.TimedOut {
		e.warnf("timed out; stopped %d processes", r.Evidence.MembersSeen)
	}
	warnStorage(e, r)
	if r.StragglersTotal > 0 {
		e.warnf("main process exited; stopped %d %s it left: %s", r.StragglersTotal,
			plural(r.StragglersTotal, "straggler", "stragglers"), stragglersText(r, kept))
	}
	if r.Evidence.KillUsed && !reported {
		if graceSkipped(r) {
			e.warnf("the polite stop reached no process; the members were killed")
		} else {
			e.warnf("members outlived the grace period and were killed")
		}
	}
}

// graceSkipped reports whether the stop skipped its grace because the
// polite request reached no one (Windows, where CTRL_BREAK_EVENT can be
// refused).
func graceSkipped(r *receipt.Receipt) bool {
	for _, st := range r.Stop.Steps {
		if st.Name == "grace" && strings.HasPrefix(st.Observed, "skipped") {
			return true
		}
	}
	return false
}

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
