package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tether-run/tether/session"
)

// TestStopReasonsInReceipt: a session's receipt names what stopped it as
// its record does — ttl for its TTL (contain's word is timeout), not-ready
// for a start whose checks failed (stopped by a request) — not contain's
// generic words.
func TestStopReasonsInReceipt(t *testing.T) {
	client := testClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	if _, err := client.Start(ctx, session.Options{Name: "short", Owner: "none", TTL: 300 * time.Millisecond, Argv: []string{"sleep", "1000"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Wait(ctx, "short"); err != nil {
		t.Fatal(err)
	}
	_, err := client.Start(ctx, session.Options{Name: "unready", Owner: "none", Ready: []string{"file:never"}, ReadyTimeout: 300 * time.Millisecond,
		Argv: []string{"sleep", "1000"}})
	if !errors.Is(err, session.ErrNotReady) {
		t.Fatalf("Start(file:never) = %v, want ErrNotReady", err)
	}
	for name, want := range map[string]string{"short": "ttl", "unready": "not-ready"} {
		in, err := client.Inspect(name, "")
		if err != nil {
			t.Fatal(err)
		}
		if in.StopReason != want || in.Receipt == nil || in.Receipt.Stop.Reason != want || !in.Receipt.StopConfirmed {
			t.Errorf("%s: record stop reason %q, receipt %+v; want %s in both, confirmed", name, in.StopReason, in.Receipt, want)
		}
	}
}
