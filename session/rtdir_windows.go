package session

import (
	"os"
	"path/filepath"
)

// rtDir is a session's runtime dir, by path: Windows has no openat, and
// a runtime dir is the user's alone there (its DACL).
type rtDir struct{ path string }

func openRTDir(path string) (*rtDir, error) { return &rtDir{path: path}, nil }

// names lists the entries that are regular files.
func (d *rtDir) names() []string {
	ents, _ := os.ReadDir(d.path)
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// take reads the regular file name (at most max bytes) and removes it.
func (d *rtDir) take(name string, max int64) ([]byte, error) {
	p := filepath.Join(d.path, name)
	defer os.Remove(p)
	f, err := openRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, max)
	n, _ := f.Read(b)
	return b[:n], nil
}

func (d *rtDir) close() {}
