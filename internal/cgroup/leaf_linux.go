package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tether-run/tether/internal/procfs"
	"github.com/tether-run/tether/internal/randid"
	"golang.org/x/sys/unix"
)

// Leaf is a cgroup v2 directory created by this process and held open.
type Leaf struct {
	Path   string // absolute path of the leaf directory
	Parent string // absolute path of the parent directory
	ID     uint64 // cgroup id: the inode number of the leaf directory

	// mu is held for reading across every use of the fds and for writing
	// while they are closed, so a number freed by Close and reused by
	// another open is never read, written or started into by mistake.
	mu       sync.RWMutex
	dirfd    int
	parentfd int
	killed   bool
	sealed   bool
}

// Create makes a fresh leaf under parent with an exclusive mkdir and opens
// it. The name is LeafPrefix and random hex; an existing name is never
// reused.
func Create(parent string) (*Leaf, error) {
	if err := CheckParent(parent); err != nil {
		return nil, err
	}
	pfd, err := unix.Open(parent, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: parent, Err: err}
	}
	for range 8 {
		name := LeafPrefix + randid.Hex(8)
		err = unix.Mkdirat(pfd, name, 0o755)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		path := filepath.Join(parent, name)
		if err != nil {
			unix.Close(pfd)
			if isPerm(err) {
				return nil, fmt.Errorf("%w: %v", ErrNotWritable, &os.PathError{Op: "mkdir", Path: path, Err: err})
			}
			return nil, &os.PathError{Op: "mkdir", Path: path, Err: err}
		}
		l, err := open(pfd, parent, name)
		if err != nil {
			unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
			unix.Close(pfd)
			return nil, err
		}
		return l, nil
	}
	unix.Close(pfd)
	return nil, fmt.Errorf("cgroup: could not pick a fresh leaf name under %q", parent)
}

func open(pfd int, parent, name string) (*Leaf, error) {
	path := filepath.Join(parent, name)
	fd, err := unix.Openat(pfd, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return &Leaf{Path: path, Parent: parent, ID: st.Ino, dirfd: fd, parentfd: pfd}, nil
}

// Name returns the leaf's directory name.
func (l *Leaf) Name() string { return filepath.Base(l.Path) }

// StartFD returns the directory fd to pass as SysProcAttr.CgroupFD, and a
// release func to call once the process is started: until then the fd
// stays open (Close waits). It refuses a leaf that was killed: the kernel
// SIGKILLs any process cloned into a cgroup that was ever written
// cgroup.kill.
func (l *Leaf) StartFD() (fd int, release func(), err error) {
	l.mu.RLock()
	switch {
	case l.dirfd < 0:
		l.mu.RUnlock()
		return -1, func() {}, ErrClosed
	case l.killed:
		l.mu.RUnlock()
		return -1, func() {}, fmt.Errorf("%w: %s", ErrKilled, l.Path)
	case l.sealed:
		l.mu.RUnlock()
		return -1, func() {}, fmt.Errorf("%w: %s", ErrSealed, l.Path)
	}
	var once sync.Once
	return l.dirfd, func() { once.Do(l.mu.RUnlock) }, nil
}

func (l *Leaf) read(file string) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.dirfd < 0 {
		return nil, ErrClosed
	}
	b, err := procfs.ReadFileAt(l.dirfd, file)
	if err != nil {
		if pe, ok := err.(*os.PathError); ok {
			pe.Path = filepath.Join(l.Path, file)
		}
		return nil, err
	}
	return b, nil
}

func (l *Leaf) write(file, data string) error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.dirfd < 0 {
		return ErrClosed
	}
	return writeFileAt(l.dirfd, file, filepath.Join(l.Path, file), data)
}

// Procs returns the pids in the leaf (cgroup.procs).
func (l *Leaf) Procs() ([]int, error) {
	b, err := l.read("cgroup.procs")
	if err != nil {
		return nil, err
	}
	return ParsePids(b)
}

// removed reports whether err from cgroup.events, read or opened through
// the held directory fd, says the cgroup itself is gone: every live
// cgroup v2 directory has the file; a removed one fails with ENODEV (an
// fd opened before) or ENOENT (an open after).
func removed(err error) bool {
	return errors.Is(err, unix.ENODEV) || errors.Is(err, unix.ENOENT)
}

// Events reads cgroup.events. A leaf that someone else removed reads as
// empty: a cgroup can be removed only once it has no process and no child,
// and under systemd the manager removes a delegated scope's whole tree,
// our leaf included, the moment the scope empties (systemd 252 does it
// while a stop is still waiting).
func (l *Leaf) Events() (Events, error) {
	b, err := l.read("cgroup.events")
	if removed(err) {
		return Events{}, nil
	}
	if err != nil {
		return Events{}, err
	}
	return ParseEvents(b)
}

// CPU reads cpu.stat, which cgroup v2 keeps in every cgroup even without
// the cpu controller.
func (l *Leaf) CPU() (CPUStat, error) {
	b, err := l.read("cpu.stat")
	if err != nil {
		return CPUStat{}, err
	}
	return ParseCPUStat(b)
}

// Seal makes every later StartFD fail with ErrSealed. A stop seals its
// leaf before its first look at it: a start under way holds the read lock
// until its process is placed, so once Seal returns every process started
// through StartFD is in cgroup.procs, and none can be started after the
// stop saw the leaf empty (issue 22: such a joiner ran on in a leaf the
// receipt called stopped).
func (l *Leaf) Seal() {
	l.mu.Lock()
	l.sealed = true
	l.mu.Unlock()
}

// Kill writes 1 to cgroup.kill: the kernel SIGKILLs every process in the
// leaf and its descendants, including those forked during the kill. After
// Kill the leaf can never be started into again (see StartFD).
func (l *Leaf) Kill() error {
	l.mu.Lock()
	l.killed = true
	l.mu.Unlock()
	return l.write("cgroup.kill", "1")
}

// Killed reports whether Kill was called.
func (l *Leaf) Killed() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.killed
}

// notifyDelay covers the kernel's rate limit on cgroup.events
// notifications (10 ms, plus a jiffy at HZ=250).
const notifyDelay = 15 * time.Millisecond

// WaitEmpty waits up to d for cgroup.events to say "populated 0" and reports
// whether it did. It sleeps in poll(2): kernfs wakes pollers of
// cgroup.events with POLLPRI when the file changes. The kernel rate-limits
// those notifications (one per ~10 ms per cgroup; a later change is
// delayed by a timer), so early in a wait, right after the change that
// started it, it polls in 1 ms slices and re-reads rather than sleep
// through the delay.
func (l *Leaf) WaitEmpty(d time.Duration) (bool, error) {
	return l.waitEvents(d, func(e Events) bool { return !e.Populated }, func(elapsed time.Duration) time.Duration {
		if elapsed < notifyDelay {
			return time.Millisecond
		}
		return d
	})
}

// waitEvents waits up to d until cond holds for cgroup.events and reports
// whether it did, re-reading the file after each POLLPRI wake-up and at
// least every slice(elapsed). It polls an fd of its own, so Close need not
// wait for it. A leaf removed under us is judged once, as empty Events.
func (l *Leaf) waitEvents(d time.Duration, cond func(Events) bool, slice func(time.Duration) time.Duration) (bool, error) {
	path := filepath.Join(l.Path, "cgroup.events")
	l.mu.RLock()
	fd, err := -1, ErrClosed
	if l.dirfd >= 0 {
		fd, err = unix.Openat(l.dirfd, "cgroup.events", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	l.mu.RUnlock()
	if err == ErrClosed {
		return false, err
	}
	if removed(err) {
		return cond(Events{}), nil
	}
	if err != nil {
		return false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	start := time.Now()
	deadline := start.Add(d)
	buf := make([]byte, 256)
	for {
		// Each read re-arms the poll notification.
		n, err := unix.Pread(fd, buf, 0)
		if removed(err) {
			return cond(Events{}), nil
		}
		if err != nil {
			return false, &os.PathError{Op: "read", Path: path, Err: err}
		}
		ev, err := ParseEvents(buf[:n])
		if err != nil {
			return false, err
		}
		if cond(ev) {
			return true, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, nil
		}
		left = min(left, slice(time.Since(start)))
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
		ms := int((left + time.Millisecond - 1) / time.Millisecond)
		if _, err := unix.Poll(fds, ms); err != nil && err != unix.EINTR {
			return false, os.NewSyscallError("poll", err)
		}
	}
}

// Remove removes the leaf's directory and closes it. A leaf that still has
// members is refused at once (EBUSY) and stays open. EBUSY after populated 0
// is retried for a bounded time: tasks that already left cgroup.procs may
// still be finishing their exit.
func (l *Leaf) Remove() error {
	if ev, err := l.Events(); err != nil {
		return err
	} else if ev.Populated {
		return &os.PathError{Op: "rmdir", Path: l.Path, Err: unix.EBUSY}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.parentfd < 0 {
		return ErrClosed
	}
	name := filepath.Base(l.Path)
	// cgroup.kill and populated 0 cover the whole subtree, but rmdir
	// refuses a cgroup with children: a member (root, or one the leaf was
	// delegated to) may have made some. They are inside our leaf, so ours
	// to remove once empty.
	if err := removeChildren(l.dirfd, l.Path, 0); err != nil {
		return err
	}
	var err error
	for i := range 100 {
		err = unix.Unlinkat(l.parentfd, name, unix.AT_REMOVEDIR)
		if errors.Is(err, unix.ENOENT) {
			err = nil
		}
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		time.Sleep(time.Duration(min(i+1, 20)) * time.Millisecond)
	}
	if err != nil {
		return &os.PathError{Op: "rmdir", Path: l.Path, Err: err}
	}
	unix.Close(l.dirfd)
	unix.Close(l.parentfd)
	l.dirfd, l.parentfd = -1, -1
	return nil
}

// maxDepth bounds removeChildren's descent (the kernel's own default
// cgroup.max.depth is unlimited; a tree this deep is not ours to walk).
const maxDepth = 32

// removeChildren removes every cgroup below the directory dirfd, deepest
// first. A populated child fails its rmdir with EBUSY, which is returned.
func removeChildren(dirfd int, path string, depth int) error {
	if depth > maxDepth {
		return &os.PathError{Op: "rmdir", Path: path, Err: unix.ELOOP}
	}
	fd, err := unix.Openat(dirfd, ".", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if removed(err) {
		return nil // removed by someone else: no children either
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue // a cgroup's interface files
		}
		child := filepath.Join(path, e.Name())
		cfd, err := unix.Openat(fd, e.Name(), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return &os.PathError{Op: "open", Path: child, Err: err}
		}
		err = removeChildren(cfd, child, depth+1)
		unix.Close(cfd)
		if err != nil {
			return err
		}
		if err := unix.Unlinkat(fd, e.Name(), unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
			return &os.PathError{Op: "rmdir", Path: child, Err: err}
		}
	}
	return nil
}

// Close releases the held fds without removing the leaf.
func (l *Leaf) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dirfd >= 0 {
		unix.Close(l.dirfd)
		l.dirfd = -1
	}
	if l.parentfd >= 0 {
		unix.Close(l.parentfd)
		l.parentfd = -1
	}
	return nil
}

// FilePath returns the path of file in the leaf.
func (l *Leaf) FilePath(file string) string { return filepath.Join(l.Path, file) }

// WriteFile writes data to file in the leaf (a limit such as memory.max).
func (l *Leaf) WriteFile(file, data string) error { return l.write(file, data) }

// ReadFile reads file in the leaf, trimmed.
func (l *Leaf) ReadFile(file string) (string, error) {
	b, err := l.read(file)
	return strings.TrimSpace(string(b)), err
}

// Has reports whether the leaf has file; controller files exist only when
// the parent enables the controller for its children.
func (l *Leaf) Has(file string) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var st unix.Stat_t
	return l.dirfd >= 0 && unix.Fstatat(l.dirfd, file, &st, 0) == nil
}

// OpenLeaf opens an existing leaf at path and proves it is the one with
// cgroup id id (its directory's inode): a leaf recorded by a tether that
// has since died, held anew. A different directory at the same path is
// ErrNotSame; a missing one os.ErrNotExist. The leaf counts as killed: it
// is never started into.
//
// The id alone proves too little for what a record says (issue 15: a
// record is input, and reap kills what it names): cgroup ids are small
// numbers, and the root cgroup's is 1. So the path must also be one tether
// could have made — absolute, clean, named as IsLeafName says — and the directory
// must be on the cgroup v2 filesystem; anything else is ErrNotSame.
func OpenLeaf(path string, id uint64) (*Leaf, error) {
	parent, name := filepath.Dir(path), filepath.Base(path)
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || !IsLeafName(name) {
		return nil, fmt.Errorf("%w: %q is not the path of a tether leaf (absolute, named %s<16 hex>)", ErrNotSame, path, LeafPrefix)
	}
	pfd, err := unix.Open(parent, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: parent, Err: err}
	}
	l, err := open(pfd, parent, name)
	if err != nil {
		unix.Close(pfd)
		return nil, err
	}
	if l.ID != id {
		found := l.ID
		l.Close()
		return nil, fmt.Errorf("%w: %s has cgroup id %d, recorded %d", ErrNotSame, path, found, id)
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(l.dirfd, &fs); err != nil || fs.Type != unix.CGROUP2_SUPER_MAGIC {
		l.Close()
		return nil, fmt.Errorf("%w: %s is not on the cgroup v2 filesystem", ErrNotSame, path)
	}
	l.killed = true
	return l, nil
}
