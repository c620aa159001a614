package sessionctl

import (
	"os"
	"path/filepath"
)

// RTDir is a session's runtime dir, by path: Windows has no openat, and
// a runtime dir is the user's alone there (its DACL).
type RTDir struct{ path string }

// OpenRTDir names the runtime dir at path.
func OpenRTDir(path string) (*RTDir, error) { return &RTDir{path: path}, nil }

// Names lists the entries that are regular files.
func (d *RTDir) Names() []string {
	ents, _ := os.ReadDir(d.path)
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// Take reads the regular file name (at most max bytes) and removes it.
func (d *RTDir) Take(name string, max int64) ([]byte, error) {
	p := filepath.Join(d.path, name)
	defer os.Remove(p)
	f, err := OpenRegular(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, max)
	n, _ := f.Read(b)
	return b[:n], nil
}

// Close releases the directory.
func (d *RTDir) Close() {}
