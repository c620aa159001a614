package contain

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/testuser"
)

// TestJoin: a process joined to a running group is in its job from its
// creation, with the standard handles given; what it starts is the
// group's, and the group's stop ends them all. A join after the stop
// has begun is refused.
func TestJoin(t *testing.T) {
	tag, dir := newTag(), testuser.TempDir(t)
	c := helperCmd(t, "sleep", tag, dir)
	c.Grace = -1
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer c.Kill()
	awaitSleepers(t, dir, 1)

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	exe, _ := os.Executable()
	ec := &exec.Cmd{Path: exe, Args: []string{exe, tag, dir, "stay"}, Env: append(helperEnviron(), helperEnv+"=breakaway"), Stdout: w}
	m, err := c.Join(ec)
	w.Close()
	if err != nil {
		t.Fatalf("Join = %v", err)
	}
	if !strings.HasPrefix(m.Token(), "windows:") || m.PID() == 0 {
		t.Errorf("member token %q, pid %d", m.Token(), m.PID())
	}
	done := make(chan int, 1)
	go func() { done <- m.Wait().Code }()
	awaitSleepers(t, dir, 2) // the main, and the joined helper's sleeper
	var out strings.Builder
	buf := make([]byte, 256)
	n, _ := r.Read(buf)
	out.Write(buf[:n])
	if !strings.Contains(out.String(), "breakaway: denied") {
		t.Errorf("the joined helper said %q on the pipe given; want its breakaway denied (it is in the job)", out.String())
	}

	if err := c.Stop(context.Background()); err != nil {
		t.Fatalf("Stop = %v", err)
	}
	rc := c.Receipt()
	checkReceipt(t, rc, 3)
	select {
	case code := <-done:
		if code != killExitCode {
			t.Errorf("the joined member exited %d, want %d (TerminateJobObject)", code, killExitCode)
		}
	case <-time.After(hangGuard):
		t.Fatal("the joined member's Wait did not return after the stop")
	}
	if _, err := c.Join(&exec.Cmd{Path: exe, Args: []string{exe}}); !errors.Is(err, ErrNoJoin) {
		t.Errorf("Join after the stop = %v, want ErrNoJoin", err)
	}
	checkGone(t, tag, nil)
}
