package delegate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// scopeXattr marks a scope that EnterScope created; its value is the
// unit's name. cgroupfs keeps user.* attributes on directories (Linux
// 5.7+), and the cgroup's owner may set them: the mark proves only that
// root or the caller set it (proveUnit).
const scopeXattr = "user.tether.scope"

// booted is sd_booted(3): systemd creates /run/systemd/system at boot.
var booted = sync.OnceValue(func() bool {
	fi, err := os.Lstat("/run/systemd/system")
	return err == nil && fi.IsDir()
})

// Booted reports whether the host was booted with systemd, whose manager
// then owns the cgroup tree.
func Booted() bool { return booted() }

// Check reports whether dir, a cgroup v2 directory, is ours to write by
// its manager's rules, and how that is proven. It does not check file
// permissions (cgroup.CheckParent does). An error wraps ErrNotDelegated
// and says why.
func Check(ctx context.Context, dir string) (Proof, error) {
	mg := &managers{}
	defer mg.close()
	return check(ctx, mg, dir)
}

// check is Check asking managers through mg.
func check(ctx context.Context, mg *managers, dir string) (Proof, error) {
	if !Booted() {
		return ProofNoManager, nil
	}
	return prove(ctx, mg, dir)
}

// prove is check on a host booted with systemd.
func prove(ctx context.Context, mg *managers, dir string) (Proof, error) {
	p, err := proveUnit(ctx, mg, dir)
	if err != nil || os.Geteuid() == 0 {
		return p, err
	}
	// systemd delegates to the unit's user, and chowns what it delegates
	// to that user: a cgroup delegated to root is not delegated to us.
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", fmt.Errorf("%w: %w", ErrNotDelegated, &os.PathError{Op: "stat", Path: dir, Err: err})
	}
	if int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%w: %s is delegated (%s), but to uid %d, not to uid %d", ErrNotDelegated, dir, p, st.Uid, os.Getuid())
	}
	return p, nil
}

// proveUnit proves that the unit holding dir was delegated by its manager,
// or that it carries a mark only root or the caller could have set (see
// Proof): the marks first, in the order of the Proof constants, then the
// manager's answer.
//
// The kernel lets only a process with CAP_SYS_ADMIN set or read a
// trusted.* attribute, and anyone who may write a directory set a user.*
// one on it (xattr(7); on cgroupfs, Linux 5.7+): the owner of a cgroup,
// delegated or not, can give it user.delegate or user.tether.scope. A
// user.* mark therefore counts only on a cgroup of root's or the
// caller's: root running in a user's cgroup is not shown a delegation by
// what that user wrote (before, it was, and made its leaves there).
func proveUnit(ctx context.Context, mg *managers, dir string) (Proof, error) {
	unit := unitDir(dir)
	if unit == "" {
		return "", fmt.Errorf("%w: %s is not inside a systemd scope or service (slices and the root belong to the manager)", ErrNotDelegated, dir)
	}
	owner, markable := markableBy(unit)
	scope, _ := getxattr(unit, scopeXattr)
	if scope == filepath.Base(unit) && markable {
		return ProofOwnScope, nil
	}
	if v, _ := getxattr(unit, "trusted.delegate"); v == "1" {
		return ProofXattr, nil
	}
	user, _ := getxattr(unit, "user.delegate")
	if user == "1" && markable {
		return ProofUserXattr, nil
	}
	var ignored string
	switch {
	case user == "1":
		ignored = fmt.Sprintf(" (its user.delegate is no proof: its owner, uid %d, can set it)", owner)
	case scope == filepath.Base(unit):
		ignored = fmt.Sprintf(" (its %s is no proof: its owner, uid %d, can set it)", scopeXattr, owner)
	}
	m, uid := managerOf(unit)
	if m == ManagerUser && uid != os.Getuid() {
		return "", fmt.Errorf("%w: %s belongs to the user manager of uid %d%s", ErrNotDelegated, unit, uid, ignored)
	}
	ok, err := mg.delegates(ctx, m, filepath.Base(unit))
	if err != nil {
		return "", fmt.Errorf("%w: %s carries no delegation mark%s and its manager could not be asked: %w", ErrNotDelegated, unit, ignored, err)
	}
	if !ok {
		return "", fmt.Errorf("%w: %s is managed by systemd's %s manager without Delegate=yes%s", ErrNotDelegated, filepath.Base(unit), m, ignored)
	}
	return ProofUnitProperty, nil
}

// markableBy returns the owner of the cgroup dir and whether only root or
// the caller could have set a user.* attribute on it: it is root's or the
// caller's. A dir that cannot be examined is not.
func markableBy(dir string) (owner int, ok bool) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return -1, false
	}
	owner = int(st.Uid)
	return owner, owner == 0 || owner == os.Getuid()
}

// unitDir returns the nearest of dir and its ancestors that is the cgroup
// of a unit that holds processes (a scope or a service), or "".
func unitDir(dir string) string {
	for d := filepath.Clean(dir); d != "/" && d != "."; d = filepath.Dir(d) {
		b := filepath.Base(d)
		if strings.HasSuffix(b, ".scope") || strings.HasSuffix(b, ".service") {
			return d
		}
	}
	return ""
}

// managerOf says which manager owns the unit at dir: the user manager of
// a uid for units below user@UID.service, else the system manager. The
// user@UID.service unit itself belongs to the system manager.
func managerOf(dir string) (Manager, int) {
	const unit, suffix = "/user@", ".service"
	for i := 0; ; i++ {
		j := strings.Index(dir[i:], unit)
		if j < 0 {
			return ManagerSystem, 0
		}
		i += j
		start := i + len(unit)
		end := start
		for end < len(dir) && dir[end] >= '0' && dir[end] <= '9' {
			end++
		}
		if end == start || !strings.HasPrefix(dir[end:], suffix) {
			continue
		}
		switch after := end + len(suffix); {
		case after == len(dir), after == len(dir)-1 && dir[after] == '/':
			return ManagerSystem, 0 // the user@UID.service unit itself
		case dir[after] == '/':
			uid, _ := strconv.Atoi(dir[start:end])
			return ManagerUser, uid
		}
	}
}

func getxattr(path, name string) (string, error) {
	buf := make([]byte, 256)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// procsOf returns the pids in dir's cgroup.procs.
func procsOf(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("delegate: %s: bad pid %q", filepath.Join(dir, "cgroup.procs"), f)
		}
		out = append(out, n)
	}
	return out, nil
}

// enterChild moves the calling process into dir/supervisor, so that dir,
// a cgroup delegated to us, holds no process of its own and may enable
// controllers for leaves beside it. It refuses with ErrBusy when dir holds
// other processes.
func enterChild(dir string) error {
	procs, err := procsOf(dir)
	if err != nil {
		return fmt.Errorf("delegate: %w", err)
	}
	self := os.Getpid()
	for _, p := range procs {
		if p != self {
			return fmt.Errorf("%w: %s holds pid %d besides ours", ErrBusy, dir, p)
		}
	}
	child := filepath.Join(dir, SupervisorDir)
	if err := os.Mkdir(child, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("delegate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(child, "cgroup.procs"), []byte(strconv.Itoa(self)), 0); err != nil {
		return fmt.Errorf("delegate: move pid %d into %s: %w", self, child, err)
	}
	return nil
}
