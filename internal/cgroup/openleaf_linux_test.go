package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenLeafRefusesWhatTetherDidNotMake: a record names a path and an
// id, and reap stops what OpenLeaf opens. The id alone is a small number
// a record can match by accident or design (the root cgroup's is 1), so
// a cgroup that is not a tether leaf, a directory outside the cgroup v2
// filesystem, and a path tether never writes are ErrNotSame, with their
// real ids.
func TestOpenLeafRefusesWhatTetherDidNotMake(t *testing.T) {
	p := parent(t)
	m, err := Mount()
	if err != nil {
		t.Skipf("no cgroup v2: %v", err)
	}
	fake := filepath.Join(t.TempDir(), LeafPrefix+"0123456789abcdef")
	if err := os.Mkdir(fake, 0o700); err != nil {
		t.Fatal(err)
	}
	l := newLeaf(t)
	tests := map[string]string{
		"the v2 root":                  m,
		"the tests' own parent":        p,
		"a directory outside cgroupfs": fake,
		"an unclean path to a leaf":    filepath.Dir(l.Path) + "/./" + filepath.Base(l.Path),
		"a relative path":              LeafPrefix + "x",
	}
	for name, path := range tests {
		t.Run(name, func(t *testing.T) {
			var st syscall.Stat_t
			syscall.Stat(path, &st)
			got, err := OpenLeaf(path, st.Ino)
			if !errors.Is(err, ErrNotSame) {
				if got != nil {
					got.Close()
				}
				t.Errorf("OpenLeaf(%s, %d) = %v, want ErrNotSame", path, st.Ino, err)
			}
		})
	}
	got, err := OpenLeaf(l.Path, l.ID)
	if err != nil {
		t.Fatalf("OpenLeaf(%s, %d) of a real leaf = %v", l.Path, l.ID, err)
	}
	got.Close()
}
