package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/registry"
)

// TestWindowsRoundTrip: the registry does on Windows what it does on
// Unix — private dirs, claims, records, the lock — with real files and
// real security descriptors.
func TestWindowsRoundTrip(t *testing.T) {
	r, err := Open(stateDir(t))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := r.Claim("web")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{r.Dir, filepath.Join(r.Dir, "records"), rt, filepath.Join(rt, "tmp")} {
		if err := r.CheckDir(d); err != nil {
			t.Errorf("CheckDir(%s) = %v", d, err)
		}
	}
	if _, err := r.Claim("web"); !errors.Is(err, registry.ErrExists) {
		t.Errorf("second Claim = %v, want registry.ErrExists", err)
	}
	rec := &registry.Record{Name: "web", State: registry.StateRunning, Argv: []string{"ping", "-t"}, CreatedAt: time.Now().UTC(), RuntimeDir: rt, Until: "main-exit"}
	if err := r.Write(rec); err != nil {
		t.Fatal(err)
	}
	got, err := r.Read("web")
	if err != nil || got.State != registry.StateRunning || got.Argv[1] != "-t" {
		t.Fatalf("Read = %+v, %v", got, err)
	}
	if recs, errs := r.ListLive(); len(recs) != 1 || len(errs) != 0 {
		t.Errorf("ListLive = %v, %v", recs, errs)
	}
	unlock, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	// A second handle on the lock file cannot take it while it is held.
	f, err := os.OpenFile(filepath.Join(r.Dir, lockName), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped))
	if err == nil {
		t.Error("the lock was taken twice")
	}
	unlock()
	if err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped)); err != nil {
		t.Errorf("the lock after unlock: %v", err)
	}
	f.Close()
	if err := r.Release("web"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(rt); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runtime dir after Release: %v", err)
	}
	if err := r.Delete("web"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read("web"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("Read after Delete = %v, want registry.ErrNotFound", err)
	}
}

// TestWindowsRefusesOpenDirs: a state dir whose DACL lets anyone else in
// (here Everyone, as a directory made by os.Mkdir under a profile that
// grants Everyone read inherits) is refused, as a 0755 one is on Unix,
// and so is a record file readable by Everyone.
func TestWindowsRefusesOpenDirs(t *testing.T) {
	d := stateDir(t)
	open := func(p string) {
		sd, err := windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;WD)") // Everyone: full access
		if err != nil {
			t.Fatal(err)
		}
		dacl, _, err := sd.DACL()
		if err != nil {
			t.Fatal(err)
		}
		if err := windows.SetNamedSecurityInfo(p, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	open(d)
	if _, err := Open(d); !errors.Is(err, registry.ErrUnsafe) {
		t.Errorf("Open(a dir Everyone may use) = %v, want registry.ErrUnsafe", err)
	}
	d2 := stateDir(t)
	r, err := Open(d2)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(d2, "records", "wide.json")
	if err := os.WriteFile(p, []byte(`{"schema_version":1,"name":"wide"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Read("wide"); err != nil {
		t.Fatalf("Read of a private record = %v", err)
	}
	open(p)
	if _, err := r.Read("wide"); !errors.Is(err, registry.ErrUnsafe) {
		t.Errorf("Read(a record Everyone may use) = %v, want registry.ErrUnsafe", err)
	}
	if _, err := r.ReadFile(filepath.Join(d2, "records"), 1<<10); !errors.Is(err, registry.ErrCorrupt) {
		t.Errorf("ReadFile(a directory) = %v, want registry.ErrCorrupt", err)
	}
}
