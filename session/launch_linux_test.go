package session

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// TestAbandonKillsStuckSupervisor: a start refused before the claim (here
// the name in use) whose supervisor does not exit when its hand-off closes
// (a stand-in that made the session's log and hangs, as one stuck in a
// D-Bus call would) kills it, and removes the log it left: when Start
// returns, the supervisor is dead and no log of the refused run remains.
func TestAbandonKillsStuckSupervisor(t *testing.T) {
	dir := t.TempDir()
	reg, err := store.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if _, err := reg.Claim("taken"); err != nil {
		t.Fatal(err)
	}
	runID := receipt.NewRunID()
	log := reg.LogPath("taken", runID)
	exe, pidFile := standIn(t, dir, ": > '"+log+"'")
	c := &Client{reg: reg, Supervisor: exe}
	err = startOnceRun(t, c, t.Context(), Options{Name: "taken", RunID: runID, Argv: []string{"true"}, Owner: "none"}, log)
	if !errors.Is(err, registry.ErrExists) {
		t.Fatalf("Start() = %v, want the name in use", err)
	}
	assertStandInDead(t, pidFile, err)
	if fs := store.LogFiles(log); len(fs) > 0 {
		t.Errorf("the refused run's log is left: %v", fs)
	}
}
