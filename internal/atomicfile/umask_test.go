//go:build unix

package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// pathWrites are the ways to write a file by its path: the exact ones
// (tether's own files) and those of a file a user names, which get perm
// less the umask.
var pathWrites = []struct {
	name  string
	write func(p string) error
	exact bool
}{
	{"WriteFileUmask", func(p string) error { return WriteFileUmask(p, []byte("r"), 0o666) }, false},
	{"WriteFileUmask over a file", func(p string) error {
		os.WriteFile(p, []byte("old"), 0o600)
		return WriteFileUmask(p, []byte("r"), 0o666)
	}, false},
	{"Reserve", func(p string) error { _, err := Reserve(p, 0o666); return err }, false},
	{"Reserve and Commit", func(p string) error {
		r, err := Reserve(p, 0o666)
		if err != nil {
			return err
		}
		return r.Commit([]byte("r"))
	}, false},
	{"WriteFile", func(p string) error { return WriteFile(p, []byte("r"), 0o666) }, true},
	{"Replace", func(p string) error { return Replace(p, []byte("r"), 0o666) }, true},
	{"Create", func(p string) error { return Create(p, []byte("r"), 0o666) }, true},
}

// TestUmaskedModes (issue 22): a file a user names — WriteFileUmask's, a
// reservation's placeholder and its content after Commit — gets perm less
// the umask, as any file a command creates; WriteFile's, Replace's and
// Create's stay exact.
func TestUmaskedModes(t *testing.T) {
	for _, umask := range []int{0o077, 0o022, 0o002} {
		for _, w := range pathWrites {
			t.Run(fmt.Sprintf("%s/umask %03o", w.name, umask), func(t *testing.T) {
				old := syscall.Umask(umask)
				defer syscall.Umask(old)
				dir := t.TempDir()
				p := filepath.Join(dir, "receipt.json")
				if err := w.write(p); err != nil {
					t.Fatal(err)
				}
				want := os.FileMode(0o666 &^ umask)
				if w.exact {
					want = 0o666
				}
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := st.Mode().Perm(); got != want {
					t.Errorf("mode = %v, want %v", got, want)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 1 {
					t.Errorf("dir has %d entries, want 1 (no temp file left)", len(ents))
				}
			})
		}
	}
}
