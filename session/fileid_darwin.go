package session

import (
	"os"

	"golang.org/x/sys/unix"
)

// fileID names the file f is open on: its device and inode.
func fileID(f *os.File) ([3]uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return [3]uint64{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return [3]uint64{uint64(st.Dev), st.Ino, 0}, nil
}
