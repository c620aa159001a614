package session

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/watch"
)

// TestReadyLastLook: when the wait is over with only log checks failing,
// the whole log is read once more, and a line already written counts:
// a TCG guest's TestRestart failed "not ready after 2s: log:ready bar (no
// line of the log matched yet)" above a log tail showing "ready bar".
// The wait here is over before the follower has read anything; a line
// the log does not hold still fails.
func TestReadyLastLook(t *testing.T) {
	state := t.TempDir()
	os.Chmod(state, 0o700)
	leakcheck.AwaitAtCleanup(t, watch.Env, state)
	c, err := Open(state)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, err := c.Start(ctx, Options{Name: "s", Owner: "none", Argv: []string{"sh", "-c", "echo hello; exec sleep 1000"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx, "s", StopOptions{})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var b bytes.Buffer
		c.Logs(ctx, "s", &b, LogOptions{Tail: -1})
		if b.String() == "hello\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log never said hello: %q", b.String())
		}
	}
	over, stop := context.WithCancel(ctx)
	stop() // the wait is over before any try
	for re, ready := range map[string]bool{"^hello$": true, "^bye$": false} {
		ch, err := parseCheck("log:" + re)
		if err != nil {
			t.Fatal(err)
		}
		r := &readiness{c: c, rec: rec, checks: []*check{ch}}
		why := r.poll(over, time.Second)
		if (why == "") != ready || (!ready && !strings.Contains(why, "not ready after 1s: log:"+re)) {
			t.Errorf("log:%s in a log holding hello, the wait over: %q; want ready %t", re, why, ready)
		}
	}
}
