package session_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tether-run/tether/session"
)

// TestOwnerDeathStopsSession: a session bound to an owner pid is stopped
// by its supervisor when that owner dies (SIGKILL, so nothing of the
// owner's takes part), with stop reason owner-exit and every member —
// a daemon that ignores SIGTERM included — confirmed gone. The session
// package's own guard on its owner watch (internal/supervisor/watch.go; TestSuperviseOwnerDeath guards it there), not only the
// CLI's tests.
func TestOwnerDeathStopsSession(t *testing.T) {
	client := testClient(t)
	owner := exec.Command("sleep", "1000")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { owner.Process.Kill(); owner.Wait() }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The daemon creates ready once it ignores SIGTERM, and Start waits
	// for it: made by the main right after the fork, the file could come
	// before the subshell's trap, and a stop then would need no kill.
	ready := filepath.Join(t.TempDir(), "ready")
	rec, err := client.Start(ctx, session.Options{
		Name: "owned", Owner: strconv.Itoa(owner.Process.Pid), Grace: 200 * time.Millisecond,
		Ready: []string{"file:" + ready},
		Argv:  []string{"sh", "-c", `(trap "" TERM; touch "$1"; exec sleep 1000) & exec sleep 1000`, "sh", ready},
	})
	if err != nil {
		t.Fatalf("Start = %v", err)
	}
	t.Cleanup(func() { client.Stop(context.Background(), "owned", session.StopOptions{Kill: true}) })
	if rec.State != "running" {
		t.Fatalf("state %q, want running", rec.State)
	}
	if s, err := client.Status("owned"); err != nil || s.OwnerAlive == nil || !*s.OwnerAlive {
		t.Fatalf("status before the owner died: %+v, %v; want the owner alive", s, err)
	}

	owner.Process.Kill()
	owner.Wait()
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	end, err := client.Wait(wctx, "owned")
	if err != nil {
		t.Fatalf("Wait after the owner's death = %+v, %v: the session outlived its owner", end, err)
	}
	if end.State != "stopped" || end.StopReason != "owner-exit" {
		t.Errorf("record %s, stop reason %q; want stopped, owner-exit", end.State, end.StopReason)
	}
	r, err := client.Receipt(end)
	if err != nil {
		t.Fatalf("Receipt = %v", err)
	}
	if !r.StopConfirmed || r.Evidence.MembersSeen < 2 || !r.Evidence.KillUsed {
		t.Errorf("receipt: confirmed %v, evidence %+v; want confirmed, the main and its TERM-ignoring daemon seen, the kill used", r.StopConfirmed, r.Evidence)
	}
}
