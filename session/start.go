//go:build linux || windows || darwin

package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tether-run/tether/internal/atomicfile"
	"github.com/tether-run/tether/internal/census"
	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// Start starts a session and returns its record once the command runs
// (or the reason it could not start, as a *StartError).
func start(ctx context.Context, reg *store.Registry, exe string, o Options) (*registry.Record, error) {
	if len(o.Argv) == 0 {
		return nil, errors.New("session: no command")
	}
	named := o.Name // what the caller's errors may call the session
	if o.Name == "" {
		o.Name = generateName(o.Argv[0])
	}
	if err := registry.CheckName(o.Name); err != nil {
		return nil, err
	}
	if o.Pool != "" {
		if err := registry.CheckPool(o.Pool); err != nil {
			return nil, err
		}
	}
	switch o.Profile {
	case "", "tmux", "playwright":
	default:
		return nil, sessionctl.BadOption("--profile %q: want tmux or playwright", o.Profile)
	}
	switch {
	case o.Until != "":
	case o.Profile != "":
		// A profile's command is a client that starts its daemon and
		// returns (tmux new -d, playwright-cli open): ending with it
		// would stop the daemon it just started.
		o.Until = UntilEmpty
	default:
		o.Until = UntilMainExit
	}
	if o.Until != UntilMainExit && o.Until != UntilEmpty {
		return nil, sessionctl.BadOption("--until %q: want %s or %s", o.Until, UntilMainExit, UntilEmpty)
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Dir == "" {
		o.Dir, _ = os.Getwd()
	}
	if o.RunID == "" {
		o.RunID = receipt.NewRunID()
	}
	if err := store.CheckRunID(o.RunID); err != nil {
		return nil, sessionctl.BadOption("%v", err) // it names the run's files
	}
	env, err := sessionEnv(o, reg.RuntimeDir(o.Name))
	if err != nil {
		return nil, err
	}
	// The supervisor starts now: its exec and set-up overlap the owner,
	// the spec and the claim below (supervisor.SendSpec), and it waits
	// for its go before it reads what the claim writes. A start that fails
	// before the claim abandons it.
	sup, err := spawnSupervisor(reg, exe, o, env)
	if err != nil {
		return nil, err
	}
	claimed := false
	defer func() {
		if !claimed {
			sup.abandon()
		}
	}()
	owner, ownerTok, err := resolveOwner(reg, named, o.Owner)
	if err != nil {
		return nil, err
	}
	storage, err := census.Admit(o.StorageMax)
	if err != nil {
		return nil, err
	}
	w, err := prepare(reg, o, env, owner, ownerTok, storage)
	if err != nil {
		return nil, err
	}
	if err := sup.handOff(w.spec); err != nil {
		return nil, err
	}
	if err := claim(reg, o, w); err != nil {
		return nil, err
	}
	claimed = true
	if err := sup.await(ctx, reg, o); err != nil {
		// The supervisor is gone (await killed one that did not report).
		// Mark the session failed if it recorded nothing it might have
		// started; a recorded leaf is reclaimed, and a recorded process
		// without one is left for reap.
		if r, rerr := reg.Read(o.Name); rerr == nil && r.State == registry.StateStarting {
			switch {
			case r.Cgroup == "" && r.Main == "":
				r.State, r.Error, r.UpdatedAt = registry.StateFailed, err.Error(), time.Now().UTC()
				reg.Write(r)
				reg.Release(o.Name)
			case r.Cgroup != "":
				if rerr := sessionctl.Reclaim(reg, r); rerr != nil {
					err = errors.Join(err, rerr)
				}
			}
		}
		return nil, err
	}
	return reg.Read(o.Name)
}

// starting is what a start writes: the session's spec.json and its first
// record.
type starting struct {
	spec []byte
	rec  *registry.Record
}

// prepare makes what the start will write, with the session's
// environment env (sessionEnv), in the runtime dir the claim will make
// (reg.RuntimeDir), and checks that it can be read back: a
// command line or environment too large for the record or the spec is
// refused here, before the name is claimed or anything is created (issue
// 22: a record written too large to read held its name for good).
// storage is the first census of o.StorageMax.
func prepare(reg *store.Registry, o Options, env []string, owner, ownerTok string, storage []receipt.Storage) (*starting, error) {
	rt := reg.RuntimeDir(o.Name)
	spec := sessionctl.Spec{
		Name: o.Name, RunID: o.RunID, Argv: o.Argv, Env: env, Dir: o.Dir, Owner: owner, OwnerToken: ownerTok,
		Profile: o.Profile, Until: o.Until, TTL: o.TTL, Grace: o.Grace, KillWait: o.KillWait,
		Mechanism: o.Mechanism, CgroupParent: o.CgroupParent, Limits: o.Limits,
		BestEffortLimits: o.BestEffortLimits, Pool: o.Pool, LogMax: o.LogMax, LogKeep: o.LogKeep,
		Max: o.Max, Ready: o.Ready, ReadyTimeout: o.ReadyTimeout, StopExec: o.StopExec,
		Storage: storage,
	}
	if o.StopExec == nil {
		spec.StopExec = profileStopExec[o.Profile]
	}
	if o.StopSignal != 0 {
		spec.StopSignal = sessionctl.SignalName(o.StopSignal)
	}
	rec := &registry.Record{
		Name: o.Name, Kind: "session", State: registry.StateStarting, RunID: o.RunID, Argv: o.Argv, Cwd: o.Dir,
		Owner: owner, OwnerToken: ownerTok, RuntimeDir: rt, Log: reg.LogPath(o.Name, o.RunID),
		Profile: o.Profile, Until: o.Until, Pool: o.Pool, StopSignal: spec.StopSignal,
	}
	if err := store.CheckSize(rec); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(b) > sessionctl.MaxSpec {
		return nil, registry.Errorf(o.Name, registry.ErrTooLarge, "the command and its environment make a spec.json of %.2f MiB, over the %d MiB limit of a spec", float64(len(b))/(1<<20), sessionctl.MaxSpec>>20)
	}
	return &starting{spec: b, rec: rec}, nil
}

// claim admits the session to its pool, claims its name and writes its
// spec and starting record as one critical section under the registry's
// lock: a concurrent start then sees this record when it counts the pool.
func claim(reg *store.Registry, o Options, w *starting) error {
	unlock, err := reg.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	if o.Pool != "" {
		if err := sessionctl.AdmitPool(reg, o.Pool, o.Max); err != nil {
			return err
		}
	}
	rt, err := reg.Claim(o.Name)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		reg.Release(o.Name)
		return err
	}
	// The name's last run becomes history (issue 27), not replaced.
	if err := reg.Archive(o.Name); err != nil {
		return fail(err)
	}
	if err := makeProfileDirs(o, rt); err != nil {
		return fail(err)
	}
	// Atomic, not synced: the spec is read by the supervisor within
	// milliseconds and means nothing after a reboot (the runtime dir is
	// this boot's); an fsync and a directory sync cost a millisecond of
	// every start on a disk (issue 13).
	if err := atomicfile.Replace(filepath.Join(rt, "spec.json"), w.spec, 0o600); err != nil {
		return fail(err)
	}
	now := time.Now().UTC()
	w.rec.CreatedAt, w.rec.UpdatedAt = now, now
	if o.TTL > 0 {
		w.rec.ExpiresAt = now.Add(o.TTL)
	}
	if err := reg.Write(w.rec); err != nil {
		return fail(err)
	}
	return nil
}

// safeName replaces each run of bytes outside [A-Za-z0-9._-] in s by one
// '_'.
func safeName(s string) string {
	var b strings.Builder
	run := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			b.WriteByte(c)
			run = false
		} else if !run {
			b.WriteByte('_')
			run = true
		}
	}
	return b.String()
}

// generateName makes <command>-<8 hex> from the command's base name,
// within the name policy (registry.CheckName): characters outside it
// become '_', and what precedes the first letter or digit is dropped (a
// command ./-x or .hidden must not make a flag or a dot-name).
func generateName(cmd string) string {
	prefix := safeName(filepath.Base(cmd))
	prefix = strings.TrimLeftFunc(prefix, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	if prefix == "" {
		prefix = "session"
	}
	return prefix + "-" + randid.Hex(4)
}

// sessionEnv is the caller's environment with the variables tether owns
// set to the session's own paths (overriding what the caller passed), and
// checks the socket paths they imply against AF_UNIX's limit.
func sessionEnv(o Options, rt string) ([]string, error) {
	own := ownEnv(o.Name, rt, o.Profile, o.RunID)
	sock := filepath.Join(rt, "sock")
	var sockets []string
	switch o.Profile {
	case "tmux":
		// tmux listens on $TMUX_TMPDIR/tmux-UID/default.
		sockets = append(sockets, filepath.Join(sock, "tmux-"+strconv.Itoa(os.Getuid()), "default"))
	case "playwright":
		// Playwright refuses a sockets dir over 75 bytes: it appends
		// cli/<16 hex>-<session>.sock and keeps to the 103-byte BSD limit.
		if len(sock) > 75 {
			return nil, fmt.Errorf("%w: PWTEST_SOCKETS_DIR %s is %d bytes; Playwright allows 75: use a shorter state directory (XDG_RUNTIME_DIR) or session name", ErrSocketPath, sock, len(sock))
		}
	}
	for _, p := range sockets {
		if len(p) > maxSocketPath {
			return nil, fmt.Errorf("%w: %s is %d bytes; AF_UNIX allows %d: use a shorter state directory (XDG_RUNTIME_DIR) or session name", ErrSocketPath, p, len(p), maxSocketPath)
		}
	}
	env := make([]string, 0, len(o.Env)+len(own))
	for _, kv := range o.Env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := own[k]; !ok && k != store.MarkerEnv {
			env = append(env, kv)
		}
	}
	for k, v := range own {
		env = append(env, k+"="+v)
	}
	for _, kv := range o.Set {
		if k := key(kv); slices.Contains(namingVars, k) {
			return nil, sessionctl.BadOption("%s is tether's: it names the session", k)
		}
	}
	return overlay(env, o.Set), nil
}

// makeProfileDirs creates in the claimed runtime dir rt the directories
// the profile's variables name.
func makeProfileDirs(o Options, rt string) error {
	if d, ok := ownEnv(o.Name, rt, o.Profile, o.RunID)["PWTEST_DAEMON_SESSION_DIR"]; ok {
		return os.Mkdir(d, 0o700)
	}
	return nil
}

// maxSocketPath is the longest path that fits sun_path (108 bytes with
// its terminating NUL) on Linux.
const maxSocketPath = 107

// resolveOwner turns an owner spec into (spec, token). The token names the
// process whose death stops the session. Its errors are about the session
// name and wrap ErrOwner (and ErrBadOptions for a spec of no known form).
//
// The default is the enclosing session, else none: the process that ran
// tether start is, in every agent harness and in `sh -c`, a throwaway
// shell whose exit would stop the session at once (systemd-run, tmux and
// docker bind no owner either). "parent" is there for who wants it.
func resolveOwner(reg *store.Registry, name, spec string) (string, string, error) {
	if spec == "" {
		if enc, ok := enclosingSession(reg); ok {
			spec = "session:" + enc
		} else {
			spec = "none"
		}
	}
	ownerErr := func(cause error, format string, a ...any) error {
		e := registry.Errorf(name, ErrOwner, format, a...)
		e.Cause = cause
		return e
	}
	switch {
	case spec == "none":
		return spec, "", nil
	case spec == "parent":
		h, err := identity.OpenPID(os.Getppid())
		if err != nil {
			return "", "", ownerErr(err, "owner (the parent process, pid %d) %s", os.Getppid(), notRunning(err))
		}
		defer h.Close()
		return spec, h.Token.String(), nil
	case strings.HasPrefix(spec, "session:"):
		rec, err := reg.Read(strings.TrimPrefix(spec, "session:"))
		if errors.Is(err, registry.ErrNotFound) {
			return "", "", ownerErr(err, "owner %s does not exist", spec)
		}
		if err != nil {
			return "", "", ownerErr(err, "owner %s: %v", spec, err)
		}
		tok, err := identity.Parse(rec.Supervisor)
		if err != nil || !rec.Live() {
			return "", "", ownerErr(err, "owner %s is not running", spec)
		}
		h, err := identity.Open(tok)
		if err != nil {
			return "", "", ownerErr(err, "owner %s is unsupervised (its supervisor is gone)", spec)
		}
		h.Close()
		return spec, rec.Supervisor, nil
	}
	pid, err := strconv.Atoi(spec)
	if err != nil || pid <= 0 {
		return "", "", ownerErr(ErrBadOptions, "owner %q: want a PID, parent, session:NAME or none", spec)
	}
	h, err := identity.OpenPID(pid)
	if err != nil {
		return "", "", ownerErr(err, "owner pid %d %s", pid, notRunning(err))
	}
	defer h.Close()
	return spec, h.Token.String(), nil
}

// notRunning says why a process could not be opened: "is not running"
// when it is gone, else the error.
func notRunning(err error) string {
	if errors.Is(err, identity.ErrGone) {
		return "is not running"
	}
	return "cannot be identified: " + err.Error()
}
