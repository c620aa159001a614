//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAtAfterSwap (issue 22): ReplaceAt and CreateAt write in the
// directory the caller opened, though it was renamed and a symlink to
// another directory put in its place.
func TestAtAfterSwap(t *testing.T) {
	ways := []struct {
		name  string
		write func(fd int, name, p string) error
	}{
		{"ReplaceAt", func(fd int, name, p string) error { return ReplaceAt(fd, name, p, []byte("new"), 0o600) }},
		{"CreateAt", func(fd int, name, p string) error { return CreateAt(fd, name, p, []byte("new"), 0o600) }},
		{"CreateAt/portable", func(fd int, name, p string) error {
			saved := unnamed
			unnamed = func(dir, string, []byte, os.FileMode) (bool, error) { return false, nil }
			defer func() { unnamed = saved }()
			return CreateAt(fd, name, p, []byte("new"), 0o600)
		}},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) {
			base := t.TempDir()
			d, moved, victim := filepath.Join(base, "d"), filepath.Join(base, "moved"), filepath.Join(base, "victim")
			for _, m := range []string{d, victim} {
				if err := os.Mkdir(m, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if err := os.Rename(d, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, d); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(d, "r.json")
			if err := w.write(fd, "r.json", p); err != nil {
				t.Fatalf("%s(%s) = %v", w.name, p, err)
			}
			if b, err := os.ReadFile(filepath.Join(moved, "r.json")); err != nil || string(b) != "new" {
				t.Errorf("the opened directory has %q, %v; want %q", b, err, "new")
			}
			if ents, _ := os.ReadDir(victim); len(ents) != 0 {
				t.Errorf("the symlink's target has %d entries, want 0: the write was redirected", len(ents))
			}
			if ents, _ := os.ReadDir(moved); len(ents) != 1 {
				t.Errorf("the opened directory has %d entries, want 1 (no temp file left)", len(ents))
			}
		})
	}
}

// TestSymlinkedDir: the writes of tether's own files (the exact
// pathWrites) refuse a symlink in place of their directory (a swapped
// directory of the state); those of a file a user names follow it, as
// open(2) does.
func TestSymlinkedDir(t *testing.T) {
	for _, w := range pathWrites {
		t.Run(w.name, func(t *testing.T) {
			base := t.TempDir()
			target, link := filepath.Join(base, "target"), filepath.Join(base, "link")
			if err := os.Mkdir(target, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			err := w.write(filepath.Join(link, "r.json"))
			ents, _ := os.ReadDir(target)
			switch follow := !w.exact; {
			case follow && (err != nil || len(ents) != 1):
				t.Errorf("%s through a symlinked dir = %v, %d entries; want nil, 1", w.name, err, len(ents))
			case !follow && (!errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, syscall.ELOOP) || len(ents) != 0):
				t.Errorf("%s through a symlinked dir = %v, %d entries; want ENOTDIR or ELOOP, 0", w.name, err, len(ents))
			}
		})
	}
}
