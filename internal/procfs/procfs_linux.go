package procfs

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ReadFile reads the whole file at path. Errors are *os.PathError.
func ReadFile(path string) ([]byte, error) {
	return ReadFileAt(unix.AT_FDCWD, path)
}

// ReadFileSized is ReadFile starting with a buffer of size bytes, for a
// file known to be larger than the usual 512: a seq_file such as
// /proc/self/mountinfo renders itself again for every read, and a buffer
// that holds it takes one read and the one that returns 0.
func ReadFileSized(path string, size int) ([]byte, error) {
	return read(unix.AT_FDCWD, path, size, false)
}

// ReadFileAt reads the whole file name relative to the directory fd dirfd.
func ReadFileAt(dirfd int, name string) ([]byte, error) {
	return read(dirfd, name, 512, false)
}

// ReadRecord reads a file that the kernel renders whole in one read, as
// one record: /proc/PID/stat (a single seq_file show). A first read
// shorter than the buffer is then all of it, and the read that would
// return 0 is saved: one system call of four per process in a walk of
// /proc (issue 13). A read that fills the buffer goes on to the end as
// ReadFile does.
func ReadRecord(path string) ([]byte, error) {
	return read(unix.AT_FDCWD, path, 1024, true)
}

// read reads name to its end, starting with a buffer of size bytes; with
// record, a first read that leaves the buffer unfilled is the end.
func read(dirfd int, name string, size int, record bool) ([]byte, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, size)
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
		first := len(buf) == 0
		buf = buf[:len(buf)+n]
		if n == 0 || record && first && n < cap(buf) {
			return buf, nil
		}
	}
}

// PIDs lists the pids /proc names now: every process, in the pid
// namespace /proc was mounted for.
func PIDs() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	out := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// EnvHas reports whether the environment block env (/proc/PID/environ:
// NUL-terminated KEY=VALUE strings) holds kv exactly.
func EnvHas(env []byte, kv string) bool {
	for len(env) > 0 {
		i := bytes.IndexByte(env, 0)
		if i < 0 {
			return string(env) == kv
		}
		if string(env[:i]) == kv {
			return true
		}
		env = env[i+1:]
	}
	return false
}
