package census

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/limits"
)

// tree makes a directory with 1000 bytes in two files (one nested), and
// beside them a symlink to a 5000-byte file outside it and a symlink to
// a directory outside it: neither may count.
func tree(t *testing.T) string {
	t.Helper()
	d, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(out, "big"), make([]byte, 5000), 0o644)
	os.Mkdir(filepath.Join(d, "sub"), 0o755)
	os.WriteFile(filepath.Join(d, "a"), make([]byte, 600), 0o644)
	os.WriteFile(filepath.Join(d, "sub", "b"), make([]byte, 400), 0o644)
	os.Symlink(filepath.Join(out, "big"), filepath.Join(d, "filelink"))
	os.Symlink(out, filepath.Join(d, "dirlink"))
	return d
}

func TestCount(t *testing.T) {
	d := tree(t)
	tests := []struct {
		name  string
		path  string
		bound time.Duration
		want  int64
		err   error
	}{
		{"tree, symlinks not followed", d, time.Minute, 1000, nil},
		{"a regular file", filepath.Join(d, "a"), time.Minute, 600, nil},
		{"a symlink as the path", filepath.Join(d, "dirlink"), time.Minute, 0, ErrSymlink},
		{"missing", filepath.Join(d, "nope"), time.Minute, 0, fs.ErrNotExist},
		{"over its bound", d, -time.Second, 0, ErrSlow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Count(tt.path, tt.bound)
			if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Errorf("Count(%s, %s) = %d, %v; want %d, %v", tt.path, tt.bound, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	d := tree(t)
	figs, err := Admit([]limits.Storage{{Path: d, Max: 1000}})
	if err != nil || len(figs) != 1 || figs[0].Before != 1000 || figs[0].Peak != 1000 || figs[0].After != -1 || figs[0].Exceeded || figs[0].Censuses != 1 {
		t.Errorf("Admit(at the ceiling) = %+v, %v; want before and peak 1000, not exceeded", figs, err)
	}
	_, err = Admit([]limits.Storage{{Path: d, Max: 999}})
	var ref *Refused
	if !errors.Is(err, ErrStorage) || !errors.Is(err, ErrOver) || !errors.As(err, &ref) || len(ref.Figures) != 1 || !ref.Figures[0].Exceeded {
		t.Errorf("Admit(over the ceiling) = %v; want a *Refused, ErrStorage and ErrOver, with the census", err)
	}
	_, err = Admit([]limits.Storage{{Path: filepath.Join(d, "nope"), Max: 1}})
	if !errors.Is(err, ErrStorage) || errors.Is(err, ErrOver) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Admit(missing) = %v; want ErrStorage for a census that cannot complete", err)
	}
}
