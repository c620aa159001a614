//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/registry"
)

// TestRetentionFromEnv: TETHER_RETAIN's forms, and the default for
// what it cannot read.
func TestRetentionFromEnv(t *testing.T) {
	for v, want := range map[string]Retention{
		"": DefaultRetention, "off": {}, "5,1d": {5, 24 * time.Hour, time.Minute}, "0,0,0": {}, "3,90m,5s": {3, 90 * time.Minute, 5 * time.Second}, "2,0": {Keep: 2, Settle: time.Minute},
	} {
		got, err := RetentionFromEnv(func(string) string { return v })
		if err != nil || got != want {
			t.Errorf("RetentionFromEnv(%q) = %+v, %v; want %+v", v, got, err, want)
		}
	}
	for _, v := range []string{"x", "5", "-1,1h", "5,-1h", "5,xd", "5,1", ",1h", "5,1h,x", "5,1h,1m,1"} {
		got, err := RetentionFromEnv(func(string) string { return v })
		if err == nil || got != DefaultRetention {
			t.Errorf("RetentionFromEnv(%q) = %+v, %v; want an error and the default", v, got, err)
		}
	}
	if s := DefaultRetention.String(); s != "20,7d" {
		t.Errorf("DefaultRetention = %s, want 20,7d", s)
	}
}

// endRun records an ended run of name that ended at end, with a log and
// a receipt, and returns it.
func endRun(t *testing.T, r *Registry, name, id string, end time.Time) *registry.Record {
	t.Helper()
	if err := r.Archive(name); err != nil {
		t.Fatal(err)
	}
	rec := &registry.Record{Name: name, Kind: "session", State: registry.StateStopped, RunID: id, CreatedAt: end, UpdatedAt: end,
		Log: r.LogPath(name, id), RuntimeDir: r.RuntimeDir(name)}
	p, err := r.WriteReceipt(name, id, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	rec.Receipt = p
	if err := os.WriteFile(rec.Log, []byte("log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestPruneAndRemoveRun: Prune removes the ended runs past the bound
// with their files and keeps the rest; a run whose runtime dir is still
// there is left; a symlink in a log's place is removed, never followed;
// RemoveRun refuses a live run and removes an earlier one by its id.
func TestPruneAndRemoveRun(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	now := time.Now()
	endRun(t, r, "web", "r1", now.Add(-3*time.Hour))
	endRun(t, r, "web", "r2", now.Add(-2*time.Hour))
	endRun(t, r, "web", "r3", now.Add(-time.Minute))
	held := endRun(t, r, "held", "h1", now.Add(-4*time.Hour))
	if _, err := r.Claim("held"); err != nil { // a stop not confirmed keeps it
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	os.Remove(r.LogPath("web", "r1"))
	if err := os.Symlink(victim, r.LogPath("web", "r1")); err != nil {
		t.Fatal(err)
	}
	if runs, errs := r.Runs("web"); len(runs) != 3 || len(errs) != 0 || runs[0].RunID != "r3" || runs[2].RunID != "r1" {
		t.Fatalf("Runs(web) = %v, %v; want r3, r2, r1", runs, errs)
	}

	gone, errs := r.Prune(Retention{Keep: 1}, now, true)
	if len(gone) != 2 || len(errs) != 0 {
		t.Errorf("dry Prune = %d runs, %v; want web's r2 and r1 (held kept: its runtime dir)", len(gone), errs)
	}
	if runs, _ := r.Runs("web"); len(runs) != 3 {
		t.Errorf("a dry Prune removed runs: %d left", len(runs))
	}
	// Settle: r2 ended 2 h ago, within 150 min: kept past Keep.
	if gone, errs := r.Prune(Retention{Keep: 1, Settle: 150 * time.Minute}, now, true); len(gone) != 1 || len(errs) != 0 || gone[0].Record.RunID != "r1" {
		t.Errorf("dry Prune with Settle = %+v, %v; want r1 only", gone, errs)
	}
	gone, errs = r.Prune(Retention{MaxAge: time.Hour}, now, false)
	if len(gone) != 2 || len(errs) != 0 || gone[0].Record.RunID != "r2" || len(gone[0].Files) != 3 {
		t.Fatalf("Prune = %+v, %v; want r2 and r1 with their record, log and receipt", gone, errs)
	}
	for _, id := range []string{"r1", "r2"} {
		for _, p := range []string{r.LogPath("web", id), r.ReceiptPath("web", id), filepath.Join(r.Dir, "ended", "web@"+id+".json")} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s after Prune: %v", p, err)
			}
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep" {
		t.Errorf("the file a planted link named = %q, %v; want it untouched", b, err)
	}
	if rec, err := r.Read("held"); err != nil || rec.RunID != held.RunID {
		t.Errorf("held after Prune: %v, %v; want kept (its runtime dir remains)", rec, err)
	}
	if _, err := r.RemoveRun("held", "h1"); !errors.Is(err, ErrNotEnded) {
		t.Errorf("RemoveRun of a run whose runtime dir remains = %v, want ErrNotEnded", err)
	}

	live := &registry.Record{Name: "web", Kind: "session", State: registry.StateRunning, RunID: "r4", CreatedAt: now, UpdatedAt: now}
	r.Archive("web")
	if err := r.Write(live); err != nil {
		t.Fatal(err)
	}
	if _, err := r.RemoveRun("web", "r4"); !errors.Is(err, ErrNotEnded) {
		t.Errorf("RemoveRun of a live run = %v, want ErrNotEnded", err)
	}
	rm, err := r.RemoveRun("web", "r3")
	if err != nil || rm.Record.RunID != "r3" {
		t.Errorf("RemoveRun(web, r3) = %+v, %v", rm, err)
	}
	if runs, _ := r.Runs("web"); len(runs) != 1 || runs[0].RunID != "r4" {
		t.Errorf("Runs(web) after RemoveRun = %v; want the live r4 alone", runs)
	}
	if rec, err := r.FindRun("web", "r"); err != nil || rec.RunID != "r4" {
		t.Errorf("FindRun(web, r) = %v, %v; want r4, the one run it prefixes", rec, err)
	}
}
