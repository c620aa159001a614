package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/contain"
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
