package watch

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tether-run/tether/atomicfile"
	"github.com/tether-run/tether/reap"
	"github.com/tether-run/tether/registry"
	"golang.org/x/sys/unix"
)

// Serve is a watcher's life: the process it runs in was started by an
// owner (spawn) with Env naming the state dir and its first connection on
// fd 3. It listens on the state dir's socket unless another watcher does,
// and returns once no owner has been connected for the linger.
func Serve() {
	dir := os.Getenv(Env)
	linger := DefaultLinger
	if d, err := time.ParseDuration(os.Getenv(LingerEnv)); err == nil {
		linger = d
	}
	w := &watcher{idle: make(chan struct{}, 1)}
	if f := os.NewFile(3, "watch"); f != nil {
		if c, err := net.FileConn(f); err == nil {
			w.serve(c.(*net.UnixConn))
		}
		f.Close()
	}
	ln, dfd := listen(dir)
	if ln != nil {
		go func() {
			for {
				c, err := ln.AcceptUnix()
				if err != nil {
					return
				}
				if checkPeer(c) != nil {
					c.Close()
					continue
				}
				w.serve(c)
			}
		}()
	}
	for {
		w.mu.Lock()
		n := w.conns
		w.mu.Unlock()
		if n == 0 {
			// Idle: wait out the linger for a new owner, then go. Closing
			// the listener first resets any connection still in its
			// backlog; that owner then starts a watcher of its own.
			select {
			case <-w.idle:
				continue
			case <-time.After(linger):
			}
			w.mu.Lock()
			n = w.conns
			if n == 0 {
				w.closing = true
			}
			w.mu.Unlock()
			if n == 0 {
				if ln != nil {
					// Still holding the lock: the socket is ours to remove,
					// so that the next owner starts a watcher at once.
					unix.Unlinkat(dfd, sockName, 0)
					ln.Close()
				}
				return
			}
		}
		<-w.idle
	}
}

// watcher is the state of a watcher: its connected owners.
type watcher struct {
	mu      sync.Mutex
	conns   int
	closing bool
	idle    chan struct{} // a connection began or ended
}

func (w *watcher) poke() {
	select {
	case w.idle <- struct{}{}:
	default:
	}
}

// serve serves one owner's connection until it ends, then stops the
// groups it had not said were done.
func (w *watcher) serve(c *net.UnixConn) {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		c.Close()
		return
	}
	w.conns++
	w.mu.Unlock()
	w.poke()
	go func() {
		defer func() {
			w.mu.Lock()
			w.conns--
			w.mu.Unlock()
			w.poke()
		}()
		pending := map[uint64]*Group{}
		sc := bufio.NewScanner(c)
		sc.Buffer(make([]byte, 64<<10), 4<<20) // a record is at most 1 MiB
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if m.V != version {
				// Another build's owner: it starts a watcher of its own
				// when we close (its groups are not ours to misread).
				pending = nil
				break
			}
			switch m.Op {
			case "add":
				if m.Group != nil {
					pending[m.ID] = m.Group
				}
			case "done":
				delete(pending, m.ID)
			}
		}
		c.Close()
		// The connection ended with groups pending: their owner died.
		var wg sync.WaitGroup
		for _, g := range pending {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stop(g)
			}()
		}
		wg.Wait()
	}()
}

// stop stops a group whose owner died, through what its record proves,
// and writes the receipt where the owner would have.
func stop(g *Group) {
	var reg *registry.Registry
	if g.Registry != "" {
		reg, _ = registry.Open(g.Registry)
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
// returns the listener and the held fd of dir.
func listen(dir string) (*net.UnixListener, int) {
	if dir == "" {
		return nil, -1
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, -1
	}
	lock, err := unix.Openat(dfd, "watch.lock", unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		unix.Close(dfd)
		return nil, -1
	}
	// Held for the watcher's life (the fd is never closed): while it is,
	// the socket is this watcher's, and a stale one may be replaced.
	if err := unix.Flock(lock, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(lock)
		unix.Close(dfd)
		return nil, -1
	}
	if err := unix.Unlinkat(dfd, sockName, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, -1
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: "/proc/self/fd/" + strconv.Itoa(dfd) + "/" + sockName, Net: "unix"})
	if err != nil {
		return nil, -1
	}
	ln.SetUnlinkOnClose(false) // its name was the /proc path
	return ln, dfd
}
