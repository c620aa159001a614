package session_test

import (
	"os"
	"testing"

	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/watch"
	"github.com/tether-run/tether/session"
)

// testClient opens a Client on a private state dir of t's, whose watcher
// is waited for at t's end, before the dir goes.
func testClient(t *testing.T) *session.Client {
	t.Helper()
	state := t.TempDir()
	os.Chmod(state, 0o700)
	leakcheck.AwaitAtCleanup(t, watch.Env, state)
	client, err := session.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	return client
}
