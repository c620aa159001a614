package delegate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
)

// TestScope runs the scope checks in a helper process, because EnterScope
// moves the whole process. It needs a host booted with systemd (the VM
// matrix in CI).
//
// On a host without systemd, permission is the only rule: Check says so
// and EnterScope has no manager to ask.
func TestScope(t *testing.T) {
	if !Booted() {
		p, err := Check(context.Background(), "/sys/fs/cgroup/anything")
		if err != nil || p != ProofNoManager {
			t.Fatalf("Check() = %q, %v; want %q", p, err, ProofNoManager)
		}
		if _, err := EnterScope(context.Background(), Options{}); !errors.Is(err, ErrNoManager) {
			t.Fatalf("EnterScope() error = %v, want ErrNoManager", err)
		}
		return
	}
	if _, err := Reachable(); err != nil {
		t.Skipf("no systemd manager for uid %d: %v", os.Getuid(), err)
	}
	before, err := cgroup.Self(0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestScopeHelper$", "-test.v")
	m, _ := cgroup.Mount()
	cmd.Env = append(os.Environ(), "TETHER_DELEGATE_HELPER=1", "TETHER_DELEGATE_BEFORE="+filepath.Join(m, before))
	out, err := cmd.CombinedOutput()
	t.Logf("helper:\n%s", out)
	if err != nil {
		t.Fatalf("helper failed: %v", err)
	}
	unit := ""
	for _, l := range strings.Split(string(out), "\n") {
		if u, ok := strings.CutPrefix(l, "UNIT="); ok {
			unit = u
		}
	}
	if unit == "" {
		t.Fatal("helper printed no UNIT=")
	}
	// The helper is gone: systemd must remove its scope and the supervisor
	// child with it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		matches, _ := filepath.Glob(filepath.Join(m, "*", unit))
		more, _ := filepath.Glob(filepath.Join(m, "user.slice", "*", "*", "*", unit))
		if len(matches)+len(more) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scope %s still exists 10 s after its last process exited: %v %v", unit, matches, more)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if after, _ := cgroup.Self(0); after != before {
		t.Fatalf("the test process moved from %s to %s", before, after)
	}
}

// TestScopeHelper is the body of TestScope, run in its own process.
func TestScopeHelper(t *testing.T) {
	if os.Getenv("TETHER_DELEGATE_HELPER") != "1" {
		return // only as TestScope's helper process
	}
	ctx := context.Background()
	// The unit the test ran in: unless systemd marked it delegated, Check
	// must refuse it, even to root (asking the manager over D-Bus).
	before := os.Getenv("TETHER_DELEGATE_BEFORE")
	if u := unitDir(before); u != "" {
		t1, _ := getxattr(u, "trusted.delegate")
		u1, _ := getxattr(u, "user.delegate")
		p, err := Check(ctx, before)
		switch {
		case t1 == "1" || u1 == "1":
			t.Logf("the test runs in %s, which systemd delegated: Check = %q, %v", u, p, err)
		case !errors.Is(err, ErrNotDelegated) && p != ProofUnitProperty:
			t.Errorf("Check(%s) = %q, %v; want ErrNotDelegated (a unit without Delegate=yes)", before, p, err)
		default:
			t.Logf("Check(%s) = %q, %v", before, p, err)
		}
	}
	s, err := EnterScope(ctx, Options{Description: "tether delegate test", PartOf: true})
	if err != nil {
		t.Fatalf("EnterScope() error = %v", err)
	}
	t.Logf("scope %+v", s)
	os.Stdout.WriteString("\nUNIT=" + s.Unit + "\n")
	self, _ := cgroup.Self(0)
	m, _ := cgroup.Mount()
	if want := filepath.Join(s.Dir, SupervisorDir); filepath.Join(m, self) != want {
		t.Errorf("after EnterScope the process is in %s, want %s", filepath.Join(m, self), want)
	}
	procs, err := procsOf(s.Dir)
	if err != nil || len(procs) != 0 {
		t.Errorf("scope's own cgroup.procs = %v, %v; want empty (free for controllers)", procs, err)
	}
	if p, err := Check(ctx, s.Dir); err != nil || p != ProofOwnScope {
		t.Errorf("Check(scope) = %q, %v; want %q", p, err, ProofOwnScope)
	}
	if p, err := Check(ctx, filepath.Join(s.Dir, SupervisorDir)); err != nil {
		t.Errorf("Check(scope/supervisor) = %q, %v; want delegated", p, err)
	}
	// The manager, asked over D-Bus (the proof used where systemd marks
	// nothing), agrees: the scope is delegated; the unit we came from,
	// unless marked, is not.
	if ok, err := unitDelegates(ctx, s.Manager, s.Unit); err != nil || !ok {
		t.Errorf("unitDelegates(%s) = %t, %v; want true", s.Unit, ok, err)
	}
	if u := unitDir(before); u != "" && s.PartOf != "" {
		t1, _ := getxattr(u, "trusted.delegate")
		if ok, err := unitDelegates(ctx, s.Manager, filepath.Base(u)); err != nil || ok != (t1 == "1") {
			t.Errorf("unitDelegates(%s) = %t, %v; want %t", filepath.Base(u), ok, err, t1 == "1")
		}
	}
	if h, err := Parent(ctx); err != nil || h.Dir != s.Dir || h.Scope == nil {
		t.Errorf("Parent() = %+v, %v; want the scope", h, err)
	}
	// Controllers can be enabled in the scope: it holds no process.
	ctrls := ScopeControllers(s.Manager)
	if len(ctrls) == 0 {
		t.Fatalf("ScopeControllers(%s) is empty", s.Manager)
	}
	for _, c := range ctrls {
		if c != "memory" && c != "pids" {
			continue
		}
		if err := os.WriteFile(filepath.Join(s.Dir, "cgroup.subtree_control"), []byte("+"+c), 0); err != nil {
			t.Errorf("enable %s in the scope: %v", c, err)
		}
	}
	if unitDir(before) == "" || filepath.Base(unitDir(before)) == s.PartOf {
		t.Logf("scope bound to %q", s.PartOf)
	} else if s.Manager == ManagerSystem {
		t.Errorf("scope PartOf = %q, want the unit the caller ran in (%s)", s.PartOf, filepath.Base(unitDir(before)))
	}
}
