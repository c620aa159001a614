//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestCreate: both ways of Create (the unnamed file where the system has
// it, the named temporary file elsewhere) write the whole content with the
// exact mode, whatever the umask, leave nothing else in the directory, and
// refuse a name that exists, a dangling symlink included, without
// touching what is there.
func TestCreate(t *testing.T) {
	for _, way := range []string{"unnamed", "portable"} {
		t.Run(way, func(t *testing.T) {
			if way == "portable" {
				saved := unnamed
				unnamed = func(dir, string, []byte, os.FileMode) (bool, error) { return false, nil }
				defer func() { unnamed = saved }()
			}
			old := syscall.Umask(0o077)
			defer syscall.Umask(old)
			dir := t.TempDir()
			p := filepath.Join(dir, "r.json")
			if err := Create(p, []byte("content"), 0o640); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != "content" {
				t.Errorf("read %q, %v; want %q", b, err, "content")
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
				t.Errorf("mode = %v, want 0640 (umask 077 must not reduce it)", st.Mode().Perm())
			}
			if err := Create(p, []byte("other"), 0o600); !errors.Is(err, fs.ErrExist) {
				t.Errorf("Create over an existing file: %v, want ErrExist", err)
			}
			if b, _ := os.ReadFile(p); string(b) != "content" {
				t.Errorf("existing file became %q", b)
			}
			link := filepath.Join(dir, "l.json")
			if err := os.Symlink(filepath.Join(dir, "absent"), link); err != nil {
				t.Fatal(err)
			}
			if err := Create(link, []byte("x"), 0o600); !errors.Is(err, fs.ErrExist) {
				t.Errorf("Create over a dangling symlink: %v, want ErrExist", err)
			}
			if _, err := os.Lstat(filepath.Join(dir, "absent")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the symlink's target was created (%v): Create followed it", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 2 {
				t.Errorf("dir has %d entries, want 2 (the file and the symlink, no temp files)", len(ents))
			}
			if err := Create(filepath.Join(dir, "missing", "r.json"), nil, 0o600); err == nil {
				t.Error("Create into a missing dir succeeded")
			}
		})
	}
}
