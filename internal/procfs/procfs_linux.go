package procfs

import (
	"os"

	"golang.org/x/sys/unix"
)

// ReadFile reads the whole file at path. Errors are *os.PathError.
func ReadFile(path string) ([]byte, error) {
	return ReadFileAt(unix.AT_FDCWD, path)
}

// ReadFileAt reads the whole file name relative to the directory fd dirfd.
func ReadFileAt(dirfd int, name string) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// ReadRecord reads a file that the kernel renders whole in one read, as
// one record: /proc/PID/stat (a single seq_file show). A read shorter
// than the buffer is then all of it, and the read that would return 0 is
// saved: one system call of four per process in a walk of /proc (issue
// 13). A read that fills the buffer goes on to the end as ReadFile does.
func ReadRecord(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 1024)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		want := cap(buf) - len(buf)
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		buf = buf[:len(buf)+n]
		if n == 0 || n < want && len(buf) == n {
			return buf, nil
		}
	}
}
