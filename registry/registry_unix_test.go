//go:build unix

package registry

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCheckName(t *testing.T) {
	for _, good := range []string{"web", "a", "0", "9.", "x.y_z-1", "a-", "a..b", "x.json", "a.log.1", "A123456789012345678901234567890123456789012345678901234567890123"} {
		if err := CheckName(good); err != nil {
			t.Errorf("CheckName(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "a/b", "a b", "ä", "A1234567890123456789012345678901234567890123456789012345678901234", "-\n",
		// Issue 15: a leading '.' is a temp file's (ls hid it, reap swept
		// it); a leading '-' a flag (the supervisor died on it).
		".h2", ".x.tmp1", "-x", "--", "-", "_x", "a\x00", "a\n", "a:b", "a=b", "a'b"} {
		if err := CheckName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", bad, err)
		}
	}
}

func TestOpenCreatesPrivateDirs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, filepath.Join(dir, "records"), filepath.Join(dir, "s")} {
		st, err := os.Lstat(d)
		if err != nil || st.Mode().Perm() != 0o700 || !st.IsDir() {
			t.Errorf("%s: %v, mode %v; want a 0700 dir", d, err, st.Mode())
		}
	}
	if r.Dir != dir {
		t.Errorf("Dir = %q", r.Dir)
	}
}

func TestOpenRefusesUnsafeDirs(t *testing.T) {
	base := t.TempDir()
	wide := filepath.Join(base, "wide")
	os.Mkdir(wide, 0o700)
	os.Chmod(wide, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(wide, link)
	tests := map[string]string{"world-writable": wide, "symlink": link, "relative": "rel/dir"}
	if os.Getuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		os.Chown(other, 65534, 65534)
		tests["another user's"] = other
	}
	for name, d := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Open(d); err == nil {
				t.Errorf("Open(%s) succeeded", d)
			} else if name != "relative" && !errors.Is(err, ErrUnsafe) {
				t.Errorf("Open(%s) = %v, want ErrUnsafe", d, err)
			}
		})
	}
}

func TestClaimWriteRead(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := r.Claim("web")
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"", "tmp", "sock"} {
		if st, err := os.Stat(filepath.Join(rt, sub)); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("runtime %s: %v", sub, err)
		}
	}
	if _, err := r.Claim("web"); !errors.Is(err, ErrExists) {
		t.Errorf("second Claim = %v, want ErrExists", err)
	}
	if _, err := r.Claim("../x"); !errors.Is(err, ErrBadName) {
		t.Errorf("Claim(../x) = %v, want ErrBadName", err)
	}
	rec := &Record{Name: "web", State: StateRunning, Argv: []string{"sleep", "1"}, CreatedAt: time.Now().UTC(), RuntimeDir: rt, Until: "main-exit"}
	if err := r.Write(rec); err != nil {
		t.Fatal(err)
	}
	got, err := r.Read("web")
	if err != nil || got.State != StateRunning || got.Argv[1] != "1" || got.SchemaVersion != SchemaVersion {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	if _, err := r.Read("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read(nope) = %v, want ErrNotFound", err)
	}
	if err := r.Release("web"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Claim("web"); err != nil {
		t.Errorf("Claim after Release = %v", err)
	}
	recs, errs := r.List()
	if len(recs) != 1 || len(errs) != 0 {
		t.Errorf("List = %v, %v", recs, errs)
	}
}

func TestReadRefusesBadRecords(t *testing.T) {
	r, _ := Open(filepath.Join(t.TempDir(), "state"))
	rec := filepath.Join(r.Dir, "records")
	os.WriteFile(filepath.Join(rec, "garbage.json"), []byte("{not json"), 0o600)
	os.WriteFile(filepath.Join(rec, "empty.json"), nil, 0o600)
	os.WriteFile(filepath.Join(rec, "schema.json"), []byte(`{"schema_version":99,"name":"schema"}`), 0o600)
	os.WriteFile(filepath.Join(rec, "wrongname.json"), []byte(`{"schema_version":1,"name":"other"}`), 0o600)
	os.WriteFile(filepath.Join(rec, "wide.json"), []byte(`{"schema_version":1,"name":"wide"}`), 0o666)
	os.Chmod(filepath.Join(rec, "wide.json"), 0o666)
	os.WriteFile(filepath.Join(t.TempDir(), "x.json"), nil, 0o600)
	os.Symlink("/etc/passwd", filepath.Join(rec, "link.json"))
	for name, want := range map[string]error{"garbage": ErrCorrupt, "empty": ErrCorrupt, "schema": ErrCorrupt, "wrongname": ErrCorrupt, "wide": ErrUnsafe, "link": ErrUnsafe} {
		if _, err := r.Read(name); !errors.Is(err, want) {
			t.Errorf("Read(%s) = %v, want %v", name, err, want)
		}
	}
	if recs, errs := r.List(); len(recs) != 0 || len(errs) != 6 {
		t.Errorf("List = %d records, %d errors; want 0, 6", len(recs), len(errs))
	}
}
