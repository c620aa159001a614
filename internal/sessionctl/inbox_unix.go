//go:build linux || darwin

package sessionctl

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Inbox is the state dir's requests dir (store.RequestsDir) as a
// supervisor opened it when it began. Whatever is left there — by a
// process of the user's, a session's command included — is read only
// through the held fd: no symlink followed, no FIFO waited on, only the
// user's regular files, and what is read is removed (issue 22).
type Inbox struct {
	f    *os.File
	path string
}

// OpenInbox opens the requests dir at path, not following a symlink.
func OpenInbox(path string) (*Inbox, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Inbox{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

// Names lists the entries that are regular files.
func (d *Inbox) Names() []string {
	fd, err := unix.Openat(int(d.f.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	ents, _ := f.ReadDir(-1)
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out
}

// Take reads the regular file name of ours (no FIFO waited on, no symlink
// followed, at most max bytes) and removes it.
func (d *Inbox) Take(name string, max int64) ([]byte, error) {
	dfd := int(d.f.Fd())
	defer unix.Unlinkat(dfd, name, 0)
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("session: %s is not a regular file of ours", name)
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// Close releases the directory.
func (d *Inbox) Close() { d.f.Close() }
