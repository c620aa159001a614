package identity

import (
	"sync"

	"golang.org/x/sys/unix"
)

// wakeFD is an eventfd made the first time a WaitExit may block, so that
// Close can end that wait: poll(2) cannot be interrupted by a channel, and
// closing a polled fd neither wakes the poller nor is safe (the number may
// be reused at once).
type wakeFD struct {
	mu   sync.Mutex
	fd   int // -1 until needed
	shut bool
}

// get returns the eventfd, making it on first use.
func (w *wakeFD) get() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		return w.fd, nil
	}
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, err
	}
	w.fd = fd
	if w.shut {
		unix.Write(fd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	}
	return fd, nil
}

// signal wakes every poller of the eventfd, for good.
func (w *wakeFD) signal() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.shut = true
	if w.fd >= 0 {
		unix.Write(w.fd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	}
}

// closing reports whether signal was called.
func (w *wakeFD) closing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.shut
}

// close releases the eventfd; call with no poller left.
func (w *wakeFD) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}
