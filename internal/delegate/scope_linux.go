package delegate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/randid"
	"golang.org/x/sys/unix"
)

// entered is the home this process moved itself to, if any.
var entered atomic.Pointer[Home]

// Entered returns the home this process moved itself to (EnterScope, or
// Prepare moving it into a child of its own cgroup), or nil. Leaves go there by default.
func Entered() *Home { return entered.Load() }

// scopeTimeout bounds the whole exchange with the manager when the caller's
// context has no deadline.
const scopeTimeout = 10 * time.Second

// EnterScope asks systemd's manager (the system manager for root, the
// user's own manager otherwise) for a new transient scope with
// Delegate=yes holding the calling process, then (unless o.StayInRoot)
// moves the process into its supervisor child, so the scope's own
// directory is free for enabling controllers for leaves. The scope ends
// when its last process does: systemd then removes its cgroup tree.
//
// It changes which cgroup the whole process is in; call it before starting
// anything that should stay in the old one. The error wraps ErrNoManager
// when no manager could be reached.
func EnterScope(ctx context.Context, o Options) (*Scope, error) {
	mg := &managers{}
	defer mg.close()
	return enterScope(ctx, mg, o)
}

// enterScope is EnterScope asking the manager through mg.
func enterScope(ctx context.Context, mg *managers, o Options) (*Scope, error) {
	if !Booted() {
		return nil, fmt.Errorf("%w: the host was not booted with systemd", ErrNoManager)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, scopeTimeout)
		defer cancel()
	}
	m := ManagerSystem
	if os.Geteuid() != 0 {
		m = ManagerUser
	}
	b, err := mg.get(ctx, m)
	if err != nil {
		return nil, fmt.Errorf("%w: %s manager: %w", ErrNoManager, m, err)
	}

	pid := os.Getpid()
	s := &Scope{Unit: fmt.Sprintf("tether-%d-%s.scope", pid, randid.Hex(4)), Manager: m}
	desc := o.Description
	if desc == "" {
		desc = "tether " + strings.Join(os.Args[1:], " ")
	}
	props := []property{
		prop("Description", truncate(desc, 200)),
		prop("PIDs", []uint32{uint32(pid)}),
		prop("Delegate", true),
		prop("CollectMode", "inactive-or-failed"),
	}
	if o.PartOf {
		// The caller's unit, from our own cgroup: no round trip. Only a
		// unit of the same manager can be a dependency.
		if own, err := ownDir(); err == nil {
			if u := unitDir(own); u != "" {
				if um, _ := managerOf(u); um == m {
					s.PartOf = filepath.Base(u)
					props = append(props, prop("PartOf", []string{s.PartOf}))
				}
			}
		}
	}
	if err := b.startTransient(ctx, s.Unit, props); err != nil {
		return nil, fmt.Errorf("delegate: start %s: %w", s.Unit, err)
	}
	mount, err := cgroup.Mount()
	if err != nil {
		return nil, err
	}
	self, err := cgroup.Self(0)
	if err != nil {
		return nil, err
	}
	s.Dir = filepath.Join(mount, self)
	if filepath.Base(s.Dir) != s.Unit {
		return nil, fmt.Errorf("delegate: systemd started %s, but this process is in %s", s.Unit, s.Dir)
	}
	if !o.StayInRoot {
		if err := enterChild(s.Dir); err != nil {
			return nil, err
		}
	}
	// The mark lets Check prove the scope ours without asking the manager
	// (the user manager marks nothing); without it Check asks over D-Bus.
	_ = unix.Setxattr(s.Dir, scopeXattr, []byte(s.Unit), 0)
	entered.Store(&Home{Dir: s.Dir, Proof: ProofOwnScope, Scope: s, Moved: !o.StayInRoot})
	return s, nil
}

// unitDelegates asks manager m for the Delegate property of unit.
func unitDelegates(ctx context.Context, m Manager, unit string) (bool, error) {
	mg := &managers{}
	defer mg.close()
	return mg.delegates(ctx, m, unit)
}

// managers holds at most one connection per manager for one exchange:
// proving our cgroup undelegated and then asking for a scope is one dial.
type managers struct{ buses map[Manager]*bus }

func (mg *managers) get(ctx context.Context, m Manager) (*bus, error) {
	if b := mg.buses[m]; b != nil {
		return b, nil
	}
	b, err := dial(ctx, m)
	if err != nil {
		return nil, err
	}
	if mg.buses == nil {
		mg.buses = map[Manager]*bus{}
	}
	mg.buses[m] = b
	return b, nil
}

// delegates asks manager m for the Delegate property of unit. A reply
// that does not come within a second is asked for again on a new
// connection (see startTransient on lost replies), within ctx.
func (mg *managers) delegates(ctx context.Context, m Manager, unit string) (bool, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, scopeTimeout)
		defer cancel()
	}
	for {
		b, err := mg.get(ctx, m)
		if err != nil {
			return false, err
		}
		try, cancel := context.WithTimeout(ctx, time.Second)
		d, err := b.delegates(try, unit)
		cancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return d, err
		}
		b.close()
		delete(mg.buses, m)
	}
}

func (mg *managers) close() {
	for _, b := range mg.buses {
		b.close()
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Reachable reports which manager EnterScope would ask, and an error when
// it cannot be reached (its private socket is missing or not ours).
func Reachable() (Manager, error) {
	if !Booted() {
		return "", fmt.Errorf("%w: the host was not booted with systemd", ErrNoManager)
	}
	m, sock := ManagerUser, userSocket()
	if os.Geteuid() == 0 {
		m, sock = ManagerSystem, "/run/systemd/private"
	}
	if err := unix.Access(sock, unix.W_OK); err != nil {
		return m, fmt.Errorf("%w: %s: %v", ErrNoManager, sock, err)
	}
	return m, nil
}

// ScopeControllers returns the controllers a scope from manager m would
// have for its leaves: for the system manager, those of the root that
// systemd delegates; for a user manager, those delegated to it
// (user@UID.service's cgroup.controllers; Delegate=pids memory cpu by
// default).
func ScopeControllers(m Manager) []string {
	mount, err := cgroup.Mount()
	if err != nil {
		return []string{}
	}
	dir := mount
	if m == ManagerUser {
		uid := os.Getuid()
		dir = filepath.Join(mount, "user.slice", fmt.Sprintf("user-%d.slice", uid), fmt.Sprintf("user@%d.service", uid))
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return []string{}
	}
	out := []string{}
	for _, c := range strings.Fields(string(b)) {
		switch c {
		case "cpu", "cpuset", "io", "memory", "pids":
			out = append(out, c)
		}
	}
	return out
}

// userSocket is the private socket of this user's manager.
func userSocket() string {
	rt := os.Getenv("XDG_RUNTIME_DIR")
	if rt == "" || !filepath.IsAbs(rt) {
		rt = fmt.Sprintf("/run/user/%d", os.Getuid())
	}
	return filepath.Join(rt, "systemd", "private")
}
