//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-run/tether/registry"
)

// FuzzRecord: any bytes in records/NAME.json read as this session's
// record (schema 1, the name its file says) or as registry.ErrCorrupt, never a
// panic; a record read writes back and reads again (issue 15).
func FuzzRecord(f *testing.F) {
	for _, s := range []string{
		`{"schema_version":1,"name":"fz","kind":"session","state":"running","argv":["sleep","1"]}`,
		`{"schema_version":1,"name":"other"}`, `{"schema_version":2,"name":"fz"}`, `{"schema_version":1,"name":"fz","exit":{"code":"x"}}`,
		`{"schema_version":1,"name":"fz","created_at":"not a time"}`, `null`, ``, "\xff", `{"schema_version":1,"name":"fz","cgroup_id":-1}`,
	} {
		f.Add([]byte(s))
	}
	r, err := Open(filepath.Join(f.TempDir(), "state"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(r.recordPath("fz"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		rec, err := r.Read("fz")
		if err != nil {
			if !errors.Is(err, registry.ErrCorrupt) {
				t.Errorf("Read of %q = %v, want registry.ErrCorrupt", b, err)
			}
			return
		}
		if rec.Name != "fz" || rec.SchemaVersion != SchemaVersion {
			t.Errorf("Read of %q = %+v", b, rec)
		}
		if err := r.Write(rec); err != nil {
			t.Fatalf("Write of a record read from %q: %v", b, err)
		}
		if _, err := r.Read("fz"); err != nil {
			t.Errorf("Read after Write of a record read from %q: %v", b, err)
		}
		os.Remove(r.endedPath("fz"))
	})
}
