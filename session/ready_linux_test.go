package session_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/session"
)

// TestClientStartReady (issue 28): the library's Start waits for
// Options.Ready; a check that does not hold in ReadyTimeout gives a
// *NotReadyError naming it, with the log's last lines, and the session
// stopped.
func TestClientStartReady(t *testing.T) {
	client := testClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, err := client.Start(ctx, session.Options{
		Name: "up", Owner: "none", Ready: []string{"log:^up$"},
		Argv: []string{"sh", "-c", "sleep 0.2; echo up; exec sleep 1000"},
	})
	if err != nil || rec.State != "running" {
		t.Fatalf("Start(log:^up$) = %+v, %v; want it running once it said up", rec, err)
	}
	var b bytes.Buffer
	client.Logs(ctx, "up", &b, session.LogOptions{Tail: -1})
	if b.String() != "up\n" {
		t.Errorf("log right after Start returned: %q, want the line it waited for", b.String())
	}
	if r, err := client.Stop(ctx, "up", session.StopOptions{}); err != nil || !r.StopConfirmed {
		t.Errorf("Stop = %v", err)
	}

	// The log's line must be there when the stop has ended the session,
	// and the 300 ms count from its start: a SIGTERM could come before sh
	// printed it (its start under TCG, a loaded host). The stop signal is
	// SIGWINCH, which sh ignores until its trap, set once it has printed
	// the line, exits: the stop ends it at once, and one before the trap
	// waits out the grace (10 s).
	_, err = client.Start(ctx, session.Options{
		Name: "down", Owner: "none", Ready: []string{"file:never"}, ReadyTimeout: 300 * time.Millisecond,
		StopSignal: syscall.SIGWINCH, Grace: 10 * time.Second,
		Argv: []string{"sh", "-c", `echo waiting; trap "exit 0" WINCH; while :; do sleep 0.05; done`},
	})
	var nr *session.NotReadyError
	if !errors.As(err, &nr) || !errors.Is(err, session.ErrNotReady) || !nr.Stopped || !slices.Equal(nr.LogTail, []string{"waiting"}) {
		t.Fatalf("Start(file:never) = %v (%+v); want a NotReadyError, the session stopped, its log", err, nr)
	}
	if s, err := client.Status("down"); err != nil || s.State != "stopped" {
		t.Errorf("status %+v, %v; want stopped", s.State, err)
	}
}
