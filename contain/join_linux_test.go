package contain

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
)

// TestJoin: a member joined to a running group is in its leaf, reports
// its own exit, and what it leaves behind is stopped with the group;
// groups without a leaf or with a stop under way refuse it.
func TestJoin(t *testing.T) {
	if mechanisms(t)[0] != receipt.MechanismCgroup {
		t.Skip("no writable cgroup v2 parent: Join needs a leaf")
	}
	c := Command("sleep", "1000")
	c.Grace = 100 * time.Millisecond
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Kill(); c.Wait() })

	out, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	ec := &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", "cat /proc/self/cgroup; setsid sleep 1000 & exit 5"}, Stdout: out}
	m, err := c.Join(ec)
	if err != nil {
		t.Fatalf("Join() = %v", err)
	}
	if got := m.Wait(); got.Code != 5 {
		t.Errorf("member exit = %+v, want code 5", got)
	}
	b, _ := os.ReadFile(out.Name())
	leaf := strings.TrimPrefix(c.Receipt().Cgroup.Path, c.Receipt().Cgroup.Parent)
	if !strings.Contains(string(b), "0::") || !strings.HasSuffix(strings.TrimSpace(lastLine(string(b))), leaf) {
		t.Errorf("member's /proc/self/cgroup = %q, want the leaf %s", b, leaf)
	}

	c.BeginStop(ReasonRequest)
	if _, err := c.Join(&exec.Cmd{Path: "/bin/true", Args: []string{"true"}}); !errors.Is(err, ErrNoJoin) {
		t.Errorf("Join() after Stop = %v, want ErrNoJoin", err)
	}
	c.Wait()
	r := c.Receipt()
	// sleep (main) and the joined member's setsid sleep.
	if !r.StopConfirmed || r.Evidence.MembersSeen < 2 {
		t.Errorf("receipt: confirmed %t, members seen %d, want the joined member's daemon among them", r.StopConfirmed, r.Evidence.MembersSeen)
	}

	fb := Command("sleep", "1000")
	fb.Mechanism = receipt.MechanismFallback
	if err := fb.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { fb.Kill(); fb.Wait() }()
	if _, err := fb.Join(&exec.Cmd{Path: "/bin/true", Args: []string{"true"}}); !errors.Is(err, ErrNoJoin) {
		t.Errorf("Join() into a fallback group = %v, want ErrNoJoin", err)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
