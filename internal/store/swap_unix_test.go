//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/registry"
)

// snapshot describes the tree at root: each path, its type and mode, and
// a file's content or a symlink's target.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		v := st.Mode().String()
		switch {
		case st.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		case st.Mode()&fs.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v += " -> " + l
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLaterSwapRedirectsNothing stages issue 22 item 2's attack after
// Open: the state directory is renamed and a new one made in its place,
// with records/, ended/, receipts/ and s/ symlinks to a victim's
// directories holding files of the names the registry will write and
// remove. Every write, removal, claim and release still acts on the
// directories Open checked, and the victim's tree is left as it was.
func TestLaterSwapRedirectsNothing(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	r, err := Open(state)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	rec := func(name, state string) *registry.Record {
		return &registry.Record{Name: name, Kind: "session", State: state, CreatedAt: now, UpdatedAt: now}
	}
	if _, err := r.Claim("gone"); err != nil {
		t.Fatal(err)
	}
	if err := r.Write(rec("old", registry.StateRunning)); err != nil {
		t.Fatal(err)
	}

	victim := filepath.Join(base, "victim")
	files := map[string]string{
		"records/web.json": "victim's", "records/old.json": "victim's", "records/run-1.json": "victim's",
		"ended/web.json": "victim's", "ended/old.json": "victim's", "receipts/web.json": "victim's",
		"s/gone/keep": "victim's", "s/new/keep": "victim's", "lock": "victim's",
	}
	for f, content := range files {
		p := filepath.Join(victim, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(state, state+".old"); err != nil {
		t.Fatal(err)
	}
	mkdir(t, state, 0o700)
	for _, sub := range []string{"records", "ended", "receipts", "s", "logs", "lock"} {
		if err := os.Symlink(filepath.Join(victim, sub), filepath.Join(state, sub)); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, victim)

	// In this order: the checks below expect web's record ended last
	// (a map's order is random, and "Write live" after "Write ended"
	// made the test fail about half the time).
	for _, o := range []struct {
		name string
		op   func() error
	}{
		{"Write live", func() error { return r.Write(rec("web", registry.StateRunning)) }},
		{"Write ended", func() error { return r.Write(rec("web", registry.StateStopped)) }},
		{"Create", func() error { return r.Create(rec("run-1", registry.StateRunning)) }},
		{"WriteReceipt", func() error { _, err := r.WriteReceipt("web", "", []byte("{}")); return err }},
		{"Delete", func() error { return r.Delete("old") }},
		{"Claim", func() error { _, err := r.Claim("new"); return err }},
		{"Release", func() error { return r.Release("gone") }},
		{"Lock", func() error {
			unlock, err := r.Lock()
			if err == nil {
				unlock()
			}
			return err
		}},
	} {
		if err := o.op(); err != nil {
			t.Errorf("%s after the swap: %v", o.name, err)
		}
	}
	after := snapshot(t, victim)
	for p := range before {
		if after[p] != before[p] {
			t.Errorf("the victim's %s changed: %q, was %q", p, after[p], before[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("the victim's tree gained %s: %q", p, after[p])
		}
	}
	held := state + ".old"
	for p, want := range map[string]bool{
		"ended/web.json": true, "records/web.json": false, "records/run-1.json": true, "receipts/web.json": true,
		"records/old.json": false, "s/new/tmp": true, "s/gone": false, "lock": true,
	} {
		if _, err := os.Lstat(filepath.Join(held, p)); (err == nil) != want {
			t.Errorf("in the directory Open checked, %s: %v; want it there: %t", p, err, want)
		}
	}
}

// TestReleaseKeepsLinkTargets: a symlink the session's command left in
// its runtime dir is removed, never followed, by Release.
func TestReleaseKeepsLinkTargets(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := r.Claim("web")
	if err != nil {
		t.Fatal(err)
	}
	outside := mkdir(t, filepath.Join(t.TempDir(), "outside"), 0o700)
	if err := os.WriteFile(filepath.Join(outside, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink(outside, filepath.Join(rt, "tmp", "dir-link"))
	os.Symlink(filepath.Join(outside, "f"), filepath.Join(rt, "file-link"))
	os.MkdirAll(filepath.Join(rt, "tmp", "a", "b"), 0o700)
	if err := r.Release("web"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(rt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runtime dir still there after Release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err != nil {
		t.Errorf("a symlink's target went with the runtime dir: %v", err)
	}
}
