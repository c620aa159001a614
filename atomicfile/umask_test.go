//go:build unix

package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestUmaskedModes (issue 22): a file a user names — WriteFileUmask's, a
// reservation's placeholder and its content after Commit — gets perm less
// the umask, as any file a command creates; WriteFile's mode stays exact.
func TestUmaskedModes(t *testing.T) {
	ways := []struct {
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
	}
	for _, umask := range []int{0o077, 0o022, 0o002} {
		for _, w := range ways {
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
