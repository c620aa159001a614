package reap_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// TestFaultCorruptRecords places records that cannot be decoded beside a
// valid dead one: each is quarantined byte for byte with its reason, and
// the valid one is still reaped.
func TestFaultCorruptRecords(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	dead := f.deadRun()
	valid, err := os.ReadFile(filepath.Join(f.state, "records", dead.Name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	// like returns the dead run's record (its leaf included) renamed and
	// changed by edit, so that a record taken for valid would be acted on.
	like := func(name string, edit func(*registry.Record)) []byte {
		rec := *dead
		rec.Name = name
		if edit != nil {
			edit(&rec)
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	truncated := like("truncated", nil)
	cases := []struct {
		file string
		data []byte
	}{
		{"garbage.json", []byte("\x00\xffthis is not JSON\n")},
		{"truncated.json", truncated[:len(truncated)/2]},
		{"empty.json", nil},
		{"null.json", []byte("null\n")},
		{"wrong-schema.json", like("wrong-schema", func(r *registry.Record) { r.SchemaVersion = store.SchemaVersion + 1 })},
		{"no-schema.json", []byte(`{"name": "no-schema", "kind": "run", "state": "running"}`)},
		{"wrong-name.json", valid},
		{"oversized.json", like("oversized", func(r *registry.Record) { r.Argv = []string{strings.Repeat("x", 1<<20)} })},
		{"bad name!.json", like("bad name!", nil)},
	}
	for _, c := range cases {
		if err := os.WriteFile(filepath.Join(f.state, "records", c.file), c.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	before := f.recordFiles()
	r, rep := f.reap()
	if r.code != 0 {
		t.Errorf("tether reap = %s, want 0 (corrupt records quarantined are handled): %s", r, r.stderr)
	}
	f.assertNoSurvivors("after tether reap")
	f.checkAccounted(before, rep)
	if a := faultAction(rep, dead.Name); a == nil || a.Class != reap.DeadLeaf {
		t.Errorf("the valid dead record beside corrupt ones: %+v, want %s", a, reap.DeadLeaf)
	}
	q := filepath.Join(f.state, "quarantine")
	var st unix.Stat_t
	if err := unix.Lstat(q, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o777 != 0o700 || st.Uid != 0 {
		t.Errorf("quarantine dir %s: %v, mode %#o uid %d; want a 0700 directory of ours", q, err, st.Mode, st.Uid)
	}
	ents, _ := os.ReadDir(q)
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			name := strings.TrimSuffix(c.file, ".json")
			if a := faultAction(rep, name); a == nil || a.Class != reap.Corrupt || !a.Done || a.Error == "" {
				t.Errorf("action = %+v, want %s, done, with the reason", a, reap.Corrupt)
			}
			if _, err := os.Lstat(filepath.Join(f.state, "records", c.file)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("records/%s still there: %v", c.file, err)
			}
			var moved []string
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), c.file+".") && !strings.HasSuffix(e.Name(), ".reason") {
					moved = append(moved, e.Name())
				}
			}
			if len(moved) != 1 {
				t.Fatalf("quarantine/%s.* = %v, want the one record", c.file, moved)
			}
			got, err := os.ReadFile(filepath.Join(q, moved[0]))
			if err != nil || !bytes.Equal(got, c.data) {
				t.Errorf("quarantine/%s: %d bytes, %v; want the original %d bytes unchanged", moved[0], len(got), err, len(c.data))
			}
			why, err := os.ReadFile(filepath.Join(q, moved[0]+".reason"))
			if err != nil || len(bytes.TrimSpace(why)) == 0 {
				t.Errorf("quarantine/%s.reason = %q, %v; want the reason", moved[0], why, err)
			}
		})
	}
	if len(ents) != 2*len(cases) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("quarantine holds %v, want a record and a reason for each of the %d corrupt ones", names, len(cases))
	}
	f.checkNoop()
}

// TestFaultRecordNotRegular places a FIFO and a directory where records
// go: reap reports them, leaves them in place or quarantines them, and
// neither blocks it nor keeps it from reaping a valid dead record.
func TestFaultRecordNotRegular(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	dead := f.deadRun()
	recs := filepath.Join(f.state, "records")
	if err := errors.Join(unix.Mkfifo(filepath.Join(recs, "fifo.json"), 0o600), os.Mkdir(filepath.Join(recs, "dir.json"), 0o700)); err != nil {
		t.Fatal(err)
	}
	// Reading the FIFO would wait for a writer that never comes; a reap
	// that takes this long is hung, whatever the machine's load.
	f.deadline = 10 * time.Second
	r, rep := f.reap()
	if r.code != 0 && r.code != 1 {
		t.Errorf("tether reap = %s: %s", r, r.stderr)
	}
	f.assertNoSurvivors("after tether reap")
	if a := faultAction(rep, dead.Name); a == nil || a.Class != reap.DeadLeaf || !a.Done {
		t.Errorf("the valid dead record: %+v, want %s, done", a, reap.DeadLeaf)
	}
	for _, name := range []string{"fifo", "dir"} {
		if a := faultAction(rep, name); a == nil || a.Class == "" || a.Plan == "" {
			t.Errorf("records/%s.json: action %+v, want it reported", name, a)
		}
		kept, _ := filepath.Glob(filepath.Join(f.state, "*", name+".json*"))
		if len(kept) == 0 {
			t.Errorf("records/%s.json: gone, neither in records/ nor in quarantine/", name)
		}
	}
	os.Remove(filepath.Join(recs, "fifo.json"))
	os.Remove(filepath.Join(recs, "dir.json"))
	f.checkNoop()
}

// TestFaultForeignFiles gives reap a record it could act on, made
// another user's, open to others, or a symlink: each is reported unsafe
// and neither it nor the live members of its leaf are touched. A state
// directory that is not the user's is refused outright.
func TestFaultForeignFiles(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	dead := f.deadRun()
	p := filepath.Join(f.state, "records", dead.Name+".json")
	elsewhere := filepath.Join(t.TempDir(), dead.Name+".json")
	cases := []struct {
		name         string
		make, undo   func() error
		uid          uint32
		mode         uint32
		symlink      bool
		path, target string
	}{
		{name: "owned-by-65534", uid: 65534, mode: 0o600,
			make: func() error { return os.Chown(p, 65534, 65534) },
			undo: func() error { return os.Chown(p, 0, 0) }},
		{name: "mode-0666", mode: 0o666,
			make: func() error { return os.Chmod(p, 0o666) },
			undo: func() error { return os.Chmod(p, 0o600) }},
		{name: "symlink", symlink: true,
			make: func() error { return errors.Join(os.Rename(p, elsewhere), os.Symlink(elsewhere, p)) },
			undo: func() error { return errors.Join(os.Remove(p), os.Rename(elsewhere, p)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := f.in(t)
			if err := c.make(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := c.undo(); err != nil {
					t.Fatal(err)
				}
			}()
			data, _ := os.ReadFile(p) // through the symlink, if any
			members := g.survivors()
			r, rep := g.reap()
			t.Logf("tether reap = %s", r)
			a := faultAction(rep, dead.Name)
			if a == nil || a.Class != reap.Unsafe || a.Done || a.Receipt != nil || a.Error == "" {
				t.Errorf("action = %+v, want %s, left alone, with the reason", a, reap.Unsafe)
			}
			for pid, argv := range members {
				if _, ok := g.survivors()[pid]; !ok {
					t.Errorf("member %d %q of the unsafe record's leaf is gone: reap acted on an unsafe record", pid, argv)
				}
			}
			if _, err := os.Stat(dead.Cgroup); err != nil {
				t.Errorf("the unsafe record's leaf: %v", err)
			}
			var st unix.Stat_t
			if err := unix.Lstat(p, &st); err != nil {
				t.Fatalf("the unsafe record: %v", err)
			}
			if got := st.Mode&unix.S_IFMT == unix.S_IFLNK; got != c.symlink {
				t.Errorf("records/%s.json is a symlink: %t, want %t", dead.Name, got, c.symlink)
			}
			if !c.symlink && (st.Uid != c.uid || st.Mode&0o777 != c.mode) {
				t.Errorf("records/%s.json: uid %d mode %#o, want uid %d mode %#o untouched", dead.Name, st.Uid, st.Mode&0o777, c.uid, c.mode)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, data) {
				t.Errorf("records/%s.json changed by reap", dead.Name)
			}
		})
	}
	// Made safe again, the record is reaped.
	before := f.recordFiles()
	r, rep := f.reap()
	if r.code != 0 {
		t.Errorf("tether reap = %s: %s", r, r.stderr)
	}
	f.assertNoSurvivors("after the record was made safe and reaped")
	f.checkAccounted(before, rep)
	f.checkNoop()

	t.Run("foreign-quarantine-dir", func(t *testing.T) {
		g := f.in(t)
		q := filepath.Join(f.state, "quarantine")
		if err := errors.Join(os.Mkdir(q, 0o700), os.Chown(q, 65534, 65534)); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(q)
		bad := filepath.Join(f.state, "records", "bad.json")
		if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(bad)
		tree := faultTree(t, f.state)
		r, rep := g.reap()
		if a := faultAction(rep, "bad"); a == nil || a.Class != reap.Corrupt || a.Done || a.Error == "" {
			t.Errorf("action = %+v, want %s, not done: the quarantine dir is another user's", a, reap.Corrupt)
		}
		if r.code != 1 {
			t.Errorf("tether reap = %s, want 1: a corrupt record could not be quarantined", r)
		}
		if got := faultTree(t, f.state); !slices.Equal(got, tree) {
			t.Errorf("state dir changed by reap:\n got %v\nwant %v", got, tree)
		}
	})

	t.Run("foreign-state-dir", func(t *testing.T) {
		g := f.in(t)
		regs := []struct {
			name  string
			setup func(dir string) error
		}{
			{"owned-by-65534", func(d string) error {
				return errors.Join(os.Mkdir(d, 0o700), os.Chown(d, 65534, 65534))
			}},
			{"records-owned-by-65534", func(d string) error {
				r := filepath.Join(d, "records")
				return errors.Join(os.Mkdir(d, 0o700), os.Mkdir(r, 0o700), os.Chown(r, 65534, 65534))
			}},
			{"mode-0755", func(d string) error {
				return errors.Join(os.Mkdir(d, 0o700), os.Chmod(d, 0o755))
			}},
			{"symlink", func(d string) error {
				real := d + "-real"
				return errors.Join(os.Mkdir(real, 0o700), os.Symlink(real, d))
			}},
		}
		for _, c := range regs {
			t.Run(c.name, func(t *testing.T) {
				g := g.in(t)
				xdg := t.TempDir()
				os.Chmod(xdg, 0o700)
				state := filepath.Join(xdg, "tether")
				if err := c.setup(state); err != nil {
					t.Fatal(err)
				}
				tree := faultTree(t, xdg)
				r := g.tether([]string{"XDG_RUNTIME_DIR=" + xdg}, "reap", "--json")
				if r.code != 1 || !strings.Contains(r.stderr, "unsafe") || strings.TrimSpace(r.stdout) != "" {
					t.Errorf("tether reap in %s = %s, stdout %q, stderr %q; want 1, refused as unsafe", state, r, r.stdout, r.stderr)
				}
				if got := faultTree(t, xdg); !slices.Equal(got, tree) {
					t.Errorf("state dir changed by a refused reap:\n got %v\nwant %v", got, tree)
				}
			})
		}
	})
}

// faultTree lists every path under dir with its type, owner and mode.
func faultTree(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %o uid=%d", strings.TrimPrefix(p, dir), st.Mode, st.Uid))
		return nil
	})
	return out
}

// TestFaultLiveLeftAlone checks that a live session and a live `tether
// run` are classed supervised and left alone, orphan-leaf reaping
// included.
func TestFaultLiveLeftAlone(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	if r := f.tether(nil, "start", "--no-reap", "--owner", "none", "--name", "live", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000"); r.code != 0 {
		t.Fatalf("tether start = %s: %s", r, r.stderr)
	}
	run := f.start(nil, "run", "--no-reap", "--", "sh", "-c", "setsid sleep 1000 & sleep 1000")
	var runName string
	for deadline := time.Now().Add(faultPatience); runName == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, ff := range f.recordFiles() {
			if ff.rec != nil && ff.rec.Kind == "run" && ff.rec.State == registry.StateRunning {
				runName = ff.rec.Name
			}
		}
	}
	if runName == "" {
		t.Fatalf("the background tether run never recorded itself running: %v", f.recordFiles())
	}
	before := f.recordFiles()
	members := f.survivors()
	r, rep := f.reap("--orphan-leaves")
	if r.code != 0 {
		t.Errorf("tether reap --orphan-leaves = %s: %s", r, r.stderr)
	}
	for _, name := range []string{"live", runName} {
		if a := faultAction(rep, name); a == nil || a.Class != reap.Supervised || a.Done || a.Receipt != nil {
			t.Errorf("action for %s = %+v, want %s, left alone", name, a, reap.Supervised)
		}
	}
	if len(rep.OrphanLeaves) != 0 {
		t.Errorf("orphan leaves = %+v, want none: both leaves are recorded", rep.OrphanLeaves)
	}
	f.checkAccounted(before, rep)
	now := f.survivors()
	for pid, argv := range members {
		if _, ok := now[pid]; !ok {
			t.Errorf("pid %d %q gone after reap: reap touched a live session or run", pid, argv)
		}
	}

	if r := f.tether(nil, "stop", "live"); r.code != 0 {
		t.Errorf("tether stop live = %s: %s", r, r.stderr)
	}
	run.cmd.Process.Signal(syscall.SIGTERM)
	if r := run.wait(); r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("tether run after SIGTERM = %s, want exit %d: %s", r, 128+int(syscall.SIGTERM), r.stderr)
	}
	f.assertNoSurvivors("after tether stop and SIGTERM to tether run")
	if rec := f.record(runName); rec != nil {
		t.Errorf("run record %s left after a confirmed stop: %+v", runName, rec)
	}
	f.checkNoop()
}
