package watch

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/internal/atomicfile"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
)

// Serve is a watcher's life: the process it runs in was started by an
// owner (spawn) with Env naming the state dir and its first connection on
// fd 3. It listens on the state dir's socket unless another watcher does,
// and returns once no owner has been connected for the linger and the
// groups of dead owners are stopped.
//
// One goroutine serves every connection through an epoll set of its own,
// itself waited on in the runtime's poller: a watcher wakes about twice
// per owner (its connect and add, its done and hang-up). A goroutine per
// connection cost a watcher 0.6 ms of CPU per run; so did a blocking
// epoll_wait, which keeps the runtime's sysmon thread polling
// (BENCHMARKS.md).
func Serve() {
	linger := DefaultLinger
	if d, err := time.ParseDuration(os.Getenv(LingerEnv)); err == nil {
		linger = d
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return // the owner finds its connection closed, and tries again
	}
	unix.SetNonblock(ep, true)
	epf := os.NewFile(uintptr(ep), "epoll") // non-blocking: in the runtime's poller
	defer epf.Close()
	raw, err := epf.SyscallConn()
	if err != nil {
		return
	}
	w := &watcher{ep: ep, raw: raw, epf: epf, conns: map[int]*peer{}, lfd: -1}
	if unix.SetNonblock(3, true) == nil {
		unix.CloseOnExec(3)
		w.add(3)
	}
	w.lfd, w.dfd, w.lock = listen(os.Getenv(Env))
	if w.lfd >= 0 {
		w.watch(w.lfd)
	}
	w.loop(linger)
	w.stops.Wait()
}

// drain is how long a watcher that unlinked its socket still serves the
// owners whose connect found it just before: closing its listener at once
// would reset them, and they would be unwatched until follow noticed.
const drain = 100 * time.Millisecond

// watcher is the state of a watcher: its listener and connected owners.
type watcher struct {
	ep        int
	epf       *os.File        // ep, for its deadline
	raw       syscall.RawConn // ep, waited on in the runtime's poller
	lfd       int             // the listener, or -1
	dfd, lock int             // the state dir and the held watch.lock, with a listener
	conns     map[int]*peer
	stops     sync.WaitGroup // the groups of dead owners being stopped
}

// loop serves events until the watcher has been idle for the linger (and
// then the drain); without a listener, until its last owner is gone: no
// other can reach it.
func (w *watcher) loop(linger time.Duration) {
	events := make([]unix.EpollEvent, 32)
	idle, draining := time.Now(), false
	for {
		var deadline time.Time
		if len(w.conns) == 0 && w.lfd < 0 {
			return
		}
		if len(w.conns) == 0 {
			left := linger - time.Since(idle)
			if draining {
				left = drain - time.Since(idle)
			}
			if left <= 0 {
				if draining {
					return
				}
				// The socket is ours to remove while we hold the lock:
				// the next owner starts a watcher at once, and may listen
				// as soon as the lock is released.
				unix.Unlinkat(w.dfd, sockName, 0)
				unix.Close(w.lock)
				idle, draining = time.Now(), true
				continue
			}
			deadline = time.Now().Add(left)
		}
		n, err := w.wait(events, deadline)
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return
		}
		busy := len(w.conns) > 0
		for _, ev := range events[:max(n, 0)] {
			if fd := int(ev.Fd); fd == w.lfd {
				w.accept()
			} else if c := w.conns[fd]; c != nil {
				w.read(fd, c)
			}
		}
		if busy && len(w.conns) == 0 {
			idle = time.Now()
		}
	}
}

// wait waits for events until the deadline (none if zero).
func (w *watcher) wait(events []unix.EpollEvent, deadline time.Time) (int, error) {
	w.epf.SetReadDeadline(deadline)
	var n int
	var werr error
	err := w.raw.Read(func(fd uintptr) bool {
		n, werr = rawEpollPoll(int(fd), events)
		return werr != nil && werr != unix.EINTR || n > 0
	})
	if err == nil {
		err = werr
	}
	return n, err
}

// watch adds fd to the epoll set.
func (w *watcher) watch(fd int) error { return rawEpollAdd(w.ep, fd) }

// accept takes every connection waiting on the listener.
func (w *watcher) accept() {
	for {
		fd, err := rawAccept4(w.lfd)
		if err == unix.EINTR || err == unix.ECONNABORTED {
			continue
		}
		if err != nil {
			return
		}
		if checkPeer(fd) != nil {
			rawClose(fd)
			continue
		}
		w.add(fd)
	}
}

// peer is a connected owner: what it sent of a line so far, and the
// groups it has not said were done.
type peer struct {
	buf     []byte
	pending map[uint64]*Group
}

// maxLine bounds a message (a record is at most 1 MiB).
const maxLine = 4 << 20

// add serves a new connection, and reads what it sent already (its add
// is usually there: one wake less).
func (w *watcher) add(fd int) {
	if w.watch(fd) != nil {
		rawClose(fd)
		return
	}
	c := &peer{}
	w.conns[fd] = c
	w.read(fd, c)
}

// read reads what fd has, and ends it at its end.
func (w *watcher) read(fd int, c *peer) {
	var b [4096]byte
	for {
		n, err := rawRead(fd, b[:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		if err != nil || n == 0 || !c.parse(b[:n]) {
			w.end(fd, c)
			return
		}
	}
}

// parse takes in p, and handles each whole line. It reports false when
// the connection is to end: a line too long, or another protocol version
// (whose owner starts a watcher of its own when we close: its groups are
// not ours to misread).
func (c *peer) parse(p []byte) bool {
	c.buf = append(c.buf, p...)
	for {
		i := bytes.IndexByte(c.buf, '\n')
		if i < 0 {
			return len(c.buf) <= maxLine
		}
		var m message
		if json.Unmarshal(c.buf[:i], &m) == nil {
			if m.V != version {
				c.pending = nil
				return false
			}
			switch m.Op {
			case "add":
				if m.Group != nil {
					if c.pending == nil {
						c.pending = map[uint64]*Group{}
					}
					c.pending[m.ID] = m.Group
				}
			case "done":
				delete(c.pending, m.ID)
			}
		}
		c.buf = c.buf[:copy(c.buf, c.buf[i+1:])]
	}
}

// end closes a connection; the groups it left pending lost their owner,
// and are stopped.
func (w *watcher) end(fd int, c *peer) {
	rawClose(fd)
	delete(w.conns, fd)
	for _, g := range c.pending {
		w.stops.Add(1)
		go func() {
			defer w.stops.Done()
			stop(g)
		}()
	}
}

// stop stops a group whose owner died, through what its record proves,
// and writes the receipt where the owner would have.
func stop(g *Group) {
	var reg *store.Registry
	if g.Registry != "" {
		reg, _ = store.Open(g.Registry)
	}
	rec := g.Record
	if rec == nil {
		// The record as its owner last wrote it; gone or ended, the
		// owner finished its stop before it died.
		if reg == nil {
			return
		}
		cur, err := reg.Read(g.Name)
		if err != nil || !cur.Live() {
			return
		}
		rec = cur
	}
	grace := min(time.Duration(g.GraceMS)*time.Millisecond, Grace)
	if grace <= 0 {
		grace = reap.NoGrace
	}
	why := g.Reason
	if why == "" {
		why = "owner-died"
	}
	a := reap.Stop(reg, rec, reap.Options{Reason: why, Grace: grace})
	if g.Receipt != "" && a.Receipt != nil {
		if b, err := a.Receipt.JSON(); err == nil {
			atomicfile.WriteFileUmask(g.Receipt, b, 0o666)
		}
	}
}

// listen listens on dir's watcher socket, unless another watcher holds
// its lock (then this one serves only the owner that started it). It
// returns the listener, the held fd of dir and the held lock, or -1s.
func listen(dir string) (lfd, dfd, lock int) {
	if dir == "" {
		return -1, -1, -1
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, -1
	}
	fail := func(fds ...int) (int, int, int) {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, -1, -1
	}
	lock, err = unix.Openat(dfd, "watch.lock", unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fail(dfd)
	}
	// Held until the socket is unlinked: while it is, the socket is this
	// watcher's, and a stale one may be replaced.
	if err := unix.Flock(lock, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(lock, dfd)
	}
	if err := unix.Unlinkat(dfd, sockName, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fail(lock, dfd)
	}
	lfd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail(lock, dfd)
	}
	if unix.Bind(lfd, &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(dfd) + "/" + sockName}) != nil || unix.Listen(lfd, 128) != nil {
		return fail(lfd, lock, dfd)
	}
	return lfd, dfd, lock
}
