package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// startFlags are tether start's flags as given.
type startFlags struct {
	name, owner, profile, until string
	ttl, grace, killWait        time.Duration
	pool                        string
	max                         int
	containFlags
	commandFlags
	json    bool
	quiet   bool
	noReap  bool
	logMax  string
	logKeep int
	limitFlags
	ready        []string
	readyTimeout time.Duration
}

// startOptions is `tether start` as its flags and arguments resolved it.
type startOptions struct {
	session     session.Options
	requireFree []string // checked when the session is started (a refusal)
	json        bool
	quiet       bool
	noReap      bool
}

func newStartCmd(e *env) *cobra.Command { return newStartCmdRun(e, runStart) }

// newStartCmdRun is newStartCmd with run called on the parsed options.
func newStartCmdRun(e *env, run func(*env, *startOptions) error) *cobra.Command {
	var f startFlags
	cmd := &cobra.Command{
		Use:   "start [flags] -- COMMAND [ARG...]",
		Short: "Start a named session that stays reachable after the caller is gone",
		Long: `Start COMMAND as a detached session under a small supervisor that owns its
containment, keeps its output in a bounded log, and stops it — with the same
stop protocol as tether run — when asked (tether stop), when its owner dies,
when --ttl expires, or when it ends by itself (--until).

The session gets TETHER_SESSION, TETHER_RUN_ID (its id, also in its record
and receipt), TETHER_SESSION_DIR and TMPDIR pointing at its own runtime dir
(outside any scratch), so daemons that put sockets under TMPDIR stay
reachable after the caller's TMPDIR is deleted. --profile tmux
sets TMUX_TMPDIR, --profile playwright PWTEST_SOCKETS_DIR and
PWTEST_DAEMON_SESSION_DIR, to the session's own dirs. A profile's command
(tmux new -d, playwright-cli open) returns once its daemon runs, so with
--profile the session ends when its last process exits (--until empty)
unless --until says otherwise.

Owner (--owner): a PID, "parent" (the process that ran tether start),
"session:NAME" (stopping that session stops this one), or "none". The
default is the session whose cgroup the caller runs in, else none: the
session then runs until it ends by itself, --ttl expires, or tether stop
(as with systemd-run, tmux or docker). An agent harness that runs each
tool call in a throwaway sh -c keeps its sessions this way; to have them
stopped when the agent dies, run the agent itself in a session (tether
start --name agent -- agent...): what it starts belongs to it by cgroup
membership, and stopping it stops them.

Readiness (--ready CHECK, repeatable: all must hold): tether start returns
only once the session is ready — tcp:[HOST:]PORT accepts a connection
(HOST: localhost), unix:PATH accepts one, file:PATH exists, log:REGEX
matches a line of the session's log, exec:CMD exits 0 (sh -c CMD, run
inside the session, in its environment). PATH may use the session's
$TETHER_SESSION_DIR or $TMPDIR (quote it from your shell) and is relative
to the working directory. --profile tmux waits for the tmux server
(exec:tmux has-session: a session exists) unless an exec check is given. If the checks do not hold
within --ready-timeout, or the session ends first, the session is stopped,
and tether start says which check failed, prints the log's last lines and
exits 1.

Prints the session's name on stdout and, on stderr (unless -q), what owns
it and how it will end. Exit status: 0 when the session runs (and is
ready); 125, 126 or 127 as for tether run when it could not start; 125
when refused before anything started (a full --pool, an owner already
gone, --require-free, a limit --limits strict cannot apply, a
--storage-max ceiling already crossed), with a not_run receipt kept in the
state dir; 1 for other failures, not ready included; 2 for usage errors.
--storage-max PATH=SIZE stops the session (reason storage) once the files
under PATH hold more than SIZE, as for tether run.`,
		Example: `  tether start --name web --owner 4242 --profile playwright -- playwright-cli open
  tether start --name dev --ready tcp:5173 -- npm run dev
  tether start --name db --ready 'log:ready to accept connections' -- postgres -D data
  tether start --profile tmux -- tmux new -d -s work
  tether start --name api --signal INT --ttl 2h --env-file .env -- ./api-server`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("missing COMMAND: usage: tether start [flags] -- COMMAND [ARG...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			so, err := f.options(e, args)
			if err != nil {
				return exit(ExitUsage, err)
			}
			return run(e, &startOptions{session: so, requireFree: f.requireFree, json: f.json, quiet: f.quiet, noReap: f.noReap})
		},
	}
	f.register(cmd)
	return cmd
}

// register adds start's flags to cmd.
func (f *startFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	fl.StringVar(&f.name, "name", "", "session `NAME`: 1–64 of A-Z a-z 0-9 . _ -, starting with a letter or digit (default <command>-<8 hex>)")
	fl.StringVar(&f.owner, "owner", "", "`OWNER` whose death stops the session: PID, parent, session:NAME or none")
	fl.StringVar(&f.profile, "profile", "", "environment for a known daemon: tmux or playwright")
	fl.StringVar(&f.until, "until", "", "when the session ends by itself: main-exit (default), or empty, once its last process exits (for commands that daemonize; the default with --profile)")
	durationVar(fl, &f.ttl, "ttl", 0, "stop the session after this long (0: never)")
	durationVar(fl, &f.grace, "grace", contain.DefaultGrace, "time members get after the stop signal when the session is stopped")
	durationVar(fl, &f.killWait, "kill-wait", contain.DefaultKillWait, "bound on the wait for emptiness after the kill")
	fl.StringVar(&f.pool, "pool", "", "pool `NAME` the session belongs to (with --max)")
	intVarP(fl, &f.max, "max", "", 0, "with --pool: refuse when N live sessions of the pool exist (dead ones are reclaimed first)")
	f.containFlags.register(fl, "cgroup v2 `DIR` for the session's leaf (default $TETHER_CGROUP_PARENT, else the supervisor's own cgroup)")
	fl.BoolVar(&f.json, "json", false, "print the session's record as JSON")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not say on stderr what owns the session and how it ends")
	fl.StringVar(&f.logMax, "log-max", limits.FormatSize(session.DefaultLogMax), "rotate the session's log past this `SIZE` per file (K, M, G; at least 64K)")
	intVarP(fl, &f.logKeep, "log-keep", "", session.DefaultLogKeep, "keep this many log files (the one written and N-1 rotated): at most log-max × N in all")
	fl.StringArrayVar(&f.ready, "ready", nil, "return once `CHECK` holds (repeatable): tcp:[HOST:]PORT, unix:PATH, file:PATH, log:REGEX, exec:CMD")
	durationVar(fl, &f.readyTimeout, "ready-timeout", session.DefaultReadyWait, "stop the session and fail if --ready does not hold within this long")
	fl.BoolVar(&f.noReap, "no-reap", false, "do not reclaim provably dead sessions and runs first (also TETHER_NO_REAP=1)")
	f.limitFlags.register(fl)
	f.commandFlags.register(cmd)
	cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions([]cobra.Completion{"tmux", "playwright"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RegisterFlagCompletionFunc("until", cobra.FixedCompletions([]cobra.Completion{session.UntilMainExit, session.UntilEmpty}, cobra.ShellCompDirectiveNoFileComp))
}

// runStart starts o's session and prints its name, or its status as
// JSON.
func runStart(e *env, so *startOptions) error {
	o := so.session
	if err := admitFree(so.requireFree); err != nil {
		return refuseStart(e, o, err)
	}
	reg, err := openRegistry(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	quickReap(e, reg, so.noReap)
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	defer client.Close()
	rec, err := client.Start(context.Background(), o)
	if refusalOf(err) != nil {
		return refuseStart(e, o, err)
	}
	if err != nil {
		return startFailed(e, o.Name, err)
	}
	if !so.quiet {
		e.warnf("started session %q (%s)", rec.Name, lifetime(rec))
		for _, c := range rec.Caveats {
			e.warnf("note: session %q %s", rec.Name, c)
		}
		noteOverrides(e, client, rec.Name, o.Set)
	}
	if so.json {
		return printJSON(e, session.StatusOf(rec))
	}
	fmt.Fprintln(e.stdout, rec.Name)
	return nil
}

// noteOverrides says which of the values the caller set stand over a
// variable tether sets for the session (TMPDIR, the profile's): theirs
// wins, and tether says so rather than silently.
func noteOverrides(e *env, client *session.Client, name string, set []string) {
	if len(set) == 0 {
		return
	}
	vars, err := client.Env(name)
	if err != nil {
		return
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		for _, v := range vars {
			if strings.HasPrefix(v, k+"=") {
				e.warnf("note: %s as given stands over the session's own", kv)
			}
		}
	}
}

// options checks start's flags and resolves them into the session's
// Options; every error is the caller's to fix (a usage error).
func (f *startFlags) options(e *env, args []string) (session.Options, error) {
	var o session.Options
	spec, err := f.budget()
	if err != nil {
		return o, err
	}
	if err := checkStartNames(f.name, f.pool, f.owner); err != nil {
		return o, err
	}
	if err := session.ParseReady(f.ready); err != nil {
		return o, err
	}
	if f.readyTimeout <= 0 && (len(f.ready) > 0 || f.profile == "tmux") {
		return o, errors.New("--ready-timeout must be positive")
	}
	if f.max < 0 || (f.max > 0 && f.pool == "") {
		return o, errors.New("--max needs --pool and a positive number")
	}
	logMax, err := limits.ParseSize(f.logMax)
	if err == nil && logMax < session.MinLogMax {
		err = fmt.Errorf("--log-max %s: at least %s", f.logMax, limits.FormatSize(session.MinLogMax))
	}
	if err == nil && f.logKeep < 1 {
		err = fmt.Errorf("--log-keep %d: at least 1", f.logKeep)
	}
	if err != nil {
		return o, err
	}
	mech, err := f.resolve(e)
	if err != nil {
		return o, err
	}
	sig, err := f.stopSignal()
	if err != nil {
		return o, err
	}
	cmdEnv, set, err := f.environ(os.Environ())
	if err != nil {
		return o, err
	}
	ceilings, err := f.ceilings()
	if err != nil {
		return o, err
	}
	o = session.Options{
		Name: f.name, Argv: args, Owner: f.owner, Profile: f.profile, Until: f.until, TTL: f.ttl,
		Pool: f.pool, Max: f.max, Grace: f.grace, KillWait: f.killWait, Mechanism: string(mech),
		Env: cmdEnv, Set: set, StopSignal: sig, StopExec: f.stopExecArgv(),
		CgroupParent: f.cgroupParent, Limits: spec, BestEffortLimits: f.limitsMode == "best-effort",
		LogMax: logMax, LogKeep: f.logKeep,
		Ready: f.ready, ReadyTimeout: f.readyTimeout,
		StorageMax: ceilings,
	}
	if f.grace == 0 {
		o.Grace = contain.NoGrace
	}
	return o, nil
}

// refuseStart is refuse for a session: its not_run receipt names the
// session, when a name was given, and goes to the state dir.
func refuseStart(e *env, o session.Options, err error) error {
	r := receipt.NotRun(o.RunID, o.Argv, "", "")
	r.Name = o.Name
	return refuse(e, refusalOf(err), r, nil)
}

// startFailed reports a start that failed: a session that did not become
// ready with its log's last lines (exit 1), a command that could not
// start with tether run's code for it, else the session error's.
func startFailed(e *env, name string, err error) error {
	var nr *session.NotReadyError
	if errors.As(err, &nr) {
		e.warnf("%v", err)
		switch len(nr.LogTail) {
		case 0:
			e.warnf("its log is empty")
		case 1:
			e.warnf("the last line of its log:")
		default:
			e.warnf("the last %d lines of its log:", len(nr.LogTail))
		}
		for _, l := range nr.LogTail {
			fmt.Fprintln(e.stderr, "  "+l)
		}
		return exit(ExitFailure, nil) // said above
	}
	var se *session.StartError
	if errors.As(err, &se) && se.Code != 0 {
		return exit(se.Code, err)
	}
	return sessionExit(name, err)
}

// lifetime says what owns a session and what will end it, for a person
// who may not know that the default owner is none.
func lifetime(rec *registry.Record) string {
	var owner string
	switch {
	case rec.Owner == "none":
		owner = "no owner"
	case strings.HasPrefix(rec.Owner, "session:"):
		owner = fmt.Sprintf("owner: session %q, whose stop stops it", strings.TrimPrefix(rec.Owner, "session:"))
	default:
		pid := rec.Owner
		if t, err := identity.Parse(rec.OwnerToken); err == nil {
			pid = strconv.Itoa(t.PID)
		}
		owner = "owner: pid " + pid
		if comm := processName(pid); comm != "" {
			owner += " " + comm
		}
		if rec.Owner == "parent" {
			owner += " (the parent of tether start)"
		}
		owner += ", whose exit stops it"
	}
	ends := "ends when its main process exits"
	if rec.Until == session.UntilEmpty {
		ends = "ends when its last process exits"
	}
	ends += ", or by tether stop " + rec.Name
	if !rec.ExpiresAt.IsZero() {
		ends += fmt.Sprintf(", or at %s (--ttl)", rec.ExpiresAt.Local().Format(time.TimeOnly))
	}
	return owner + "; " + ends
}

// processName is the command name of pid (from /proc), or "".
func processName(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
