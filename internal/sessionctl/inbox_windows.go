package sessionctl

import (
	"os"
	"path/filepath"
)

// Inbox is the state dir's requests dir (store.RequestsDir), by path:
// Windows has no openat, and the state dir is the user's alone there (its
// DACL).
type Inbox struct{ path string }

// OpenInbox names the requests dir at path.
func OpenInbox(path string) (*Inbox, error) { return &Inbox{path: path}, nil }

// Names lists the entries that are regular files.
func (d *Inbox) Names() []string {
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
func (d *Inbox) Take(name string, max int64) ([]byte, error) {
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
func (d *Inbox) Close() {}
