//go:build unix

package store

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestTakeRequests: what a process of the user's leaves in the requests
// dir can neither block nor redirect a supervisor's reads (issue 22): a
// FIFO is not waited on, a symlink is not followed and its target is
// left alone, every entry under the prefix is removed, and another
// supervisor's file is neither read nor removed.
func TestTakeRequests(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	dir, target := r.RequestsDir(), filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, []byte("secret"), 0o600)
	if err := r.PutRequest("stop-a-1.json", []byte(`{"reason":"request"}`)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "stop-a-2.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink(target, filepath.Join(dir, "stop-a-3.json"))
	os.WriteFile(filepath.Join(dir, "stop-b-1.json"), []byte(`{"reason":"other"}`), 0o600)

	done := make(chan [][]byte)
	go func() { done <- r.TakeRequests("stop-a-", 1<<10) }()
	select {
	case got := <-done:
		if len(got) != 1 || string(got[0]) != `{"reason":"request"}` {
			t.Errorf("TakeRequests = %q, want the regular file's only", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("TakeRequests blocked on a FIFO")
	}
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if !slices.Equal(left, []string{"stop-b-1.json"}) {
		t.Errorf("left in the requests dir: %q, want every entry under the prefix removed and the other's kept", left)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "secret" {
		t.Errorf("the symlink's target: %q, %v; want it untouched", b, err)
	}
}
