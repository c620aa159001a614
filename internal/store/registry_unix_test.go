//go:build unix

package store

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/registry"
)

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
			} else if name != "relative" && !errors.Is(err, registry.ErrUnsafe) {
				t.Errorf("Open(%s) = %v, want registry.ErrUnsafe", d, err)
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
	if _, err := r.Claim("web"); !errors.Is(err, registry.ErrExists) {
		t.Errorf("second Claim = %v, want registry.ErrExists", err)
	}
	if _, err := r.Claim("../x"); !errors.Is(err, registry.ErrBadName) {
		t.Errorf("Claim(../x) = %v, want registry.ErrBadName", err)
	}
	rec := &registry.Record{Name: "web", State: registry.StateRunning, Argv: []string{"sleep", "1"}, CreatedAt: time.Now().UTC(), RuntimeDir: rt, Until: "main-exit"}
	if err := r.Write(rec); err != nil {
		t.Fatal(err)
	}
	got, err := r.Read("web")
	if err != nil || got.State != registry.StateRunning || got.Argv[1] != "1" || got.SchemaVersion != SchemaVersion {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	if _, err := r.Read("nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Read(nope) = %v, want registry.ErrNotFound", err)
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
	for name, want := range map[string]error{"garbage": registry.ErrCorrupt, "empty": registry.ErrCorrupt, "schema": registry.ErrCorrupt, "wrongname": registry.ErrCorrupt, "wide": registry.ErrUnsafe, "link": registry.ErrUnsafe} {
		if _, err := r.Read(name); !errors.Is(err, want) {
			t.Errorf("Read(%s) = %v, want %v", name, err, want)
		}
	}
	if recs, errs := r.List(); len(recs) != 0 || len(errs) != 6 {
		t.Errorf("List = %d records, %d errors; want 0, 6", len(recs), len(errs))
	}
}

// TestReadFileRefuses: what the registry reads besides records (receipts,
// spec.json) is refused with its path and the reason when it is not a
// regular file of the user's closed to others: never followed, never
// waited on, never read past its bound (issue 15).
func TestReadFileRefuses(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(r.Dir, "receipts")
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("ok.json"), []byte("{}"), 0o600)
	os.WriteFile(p("big.json"), make([]byte, 100), 0o600)
	os.WriteFile(p("wide.json"), nil, 0o600)
	os.Chmod(p("wide.json"), 0o622)
	os.Symlink(p("ok.json"), p("link.json"))
	os.Mkdir(p("dir.json"), 0o700)
	if err := unix.Mkfifo(p("fifo.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", p("sock.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	tests := map[string]error{"big": registry.ErrCorrupt, "wide": registry.ErrUnsafe, "link": registry.ErrUnsafe, "dir": registry.ErrCorrupt, "fifo": registry.ErrCorrupt, "sock": unix.ENXIO, "missing": os.ErrNotExist}
	if os.Getuid() == 0 {
		os.WriteFile(p("other.json"), nil, 0o600)
		os.Chown(p("other.json"), 65534, 65534)
		tests["other"] = registry.ErrUnsafe
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			// open(2) of a socket is ENXIO: refused, not read.
			_, err := r.ReadFile(p(name+".json"), 10)
			if !errors.Is(err, want) || !strings.Contains(err.Error(), p(name+".json")) {
				t.Errorf("ReadFile(%s) = %v, want %v naming the path", name, err, want)
			}
		})
	}
	if b, err := r.ReadFile(p("ok.json"), 10); err != nil || string(b) != "{}" {
		t.Errorf("ReadFile(ok) = %q, %v", b, err)
	}
	for _, n := range []string{"link", "dir", "fifo", "sock"} {
		if _, err := os.Lstat(p(n + ".json")); err != nil {
			t.Errorf("%s.json is gone after a refused read: %v", n, err)
		}
	}
}

// TestDefaultDirRefusesBadEnv: XDG_RUNTIME_DIR (and XDG_STATE_HOME)
// values that cannot be a state dir's base are refused naming the
// variable, its value and why; unset or empty ones fall through.
func TestDefaultDirRefusesBadEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return v
			}
			return ""
		}
	}
	for name, tt := range map[string]struct{ value, want string }{
		"relative":             {"run/user/0", "not an absolute path"},
		"dot":                  {".", "not an absolute path"},
		"newline":              {"/tmp/a\nb", "control character"},
		"escape":               {"/tmp/\x1b[2J", "control character"},
		"longer than PATH_MAX": {"/" + strings.Repeat("x", 5000), "PATH_MAX"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DefaultDir(env(tt.value))
			if !errors.Is(err, registry.ErrBadEnv) || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR=") || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("DefaultDir(XDG_RUNTIME_DIR=%.40q) = %v, want registry.ErrBadEnv, one line, %q", tt.value, err, tt.want)
			}
		})
	}
	rt := t.TempDir()
	if d, err := DefaultDir(env(rt)); err != nil || d != filepath.Join(rt, "tether") {
		t.Errorf("DefaultDir(%s) = %q, %v", rt, d, err)
	}
}

// TestCreateDelete: Create writes a live record that Read returns, refuses
// a name that has a record and a record that is not live; Delete removes
// it, ended or not, and a missing record is no error.
func TestCreateDelete(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &registry.Record{Name: "run-1", Kind: "run", State: registry.StateRunning, Argv: []string{"true"}, CreatedAt: time.Now().UTC(), Until: "main-exit"}
	if err := r.Create(rec); err != nil {
		t.Fatal(err)
	}
	got, err := r.Read("run-1")
	if err != nil || got.State != registry.StateRunning || got.SchemaVersion != SchemaVersion {
		t.Fatalf("Read after Create = %+v, %v", got, err)
	}
	if err := r.Create(rec); !errors.Is(err, os.ErrExist) {
		t.Errorf("second Create = %v, want ErrExist", err)
	}
	if err := r.Create(&registry.Record{Name: "run-2", State: registry.StateStopped}); err == nil {
		t.Error("Create of a record that is not live succeeded")
	}
	if err := r.Delete("run-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read("run-1"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Read after Delete = %v, want registry.ErrNotFound", err)
	}
	ended := &registry.Record{Name: "run-3", Kind: "run", State: registry.StateStopped, CreatedAt: time.Now().UTC()}
	if err := r.Write(ended); err != nil {
		t.Fatal(err)
	}
	if err := r.Delete("run-3"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(r.endedPath("run-3")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ended record still there after Delete: %v", err)
	}
	if err := r.Delete("run-4"); err != nil {
		t.Errorf("Delete of a missing record = %v, want nil", err)
	}
}
