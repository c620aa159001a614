package watch

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The watcher's system calls on its event path, none of which blocks
// (its descriptors are non-blocking, its epoll_pwait does not wait), made
// without telling the runtime (RawSyscall) as its own poller makes them:
// telling it (entersyscall) wakes the runtime's sysmon thread from its
// deep sleep, which then polls every 20 µs for a millisecond — most of
// what an idle watcher spent per owner (BENCHMARKS.md, issue 24).

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// rawEpollPoll returns the events ready in ep, without waiting.
func rawEpollPoll(ep int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	return int(n), errnoErr(e)
}

// rawEpollAdd adds fd to ep, for input and hang-up.
func rawEpollAdd(ep, fd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)}
	_, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(ep), unix.EPOLL_CTL_ADD, uintptr(fd), uintptr(unsafe.Pointer(&ev)), 0, 0)
	return errnoErr(e)
}

// rawAccept4 accepts a connection on a non-blocking listener, as a
// non-blocking, close-on-exec socket.
func rawAccept4(lfd int) (int, error) {
	fd, _, e := unix.RawSyscall6(unix.SYS_ACCEPT4, uintptr(lfd), 0, 0, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	return int(fd), errnoErr(e)
}

// rawRead reads from a non-blocking descriptor.
func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), errnoErr(e)
}

// rawPeerUID returns the uid of the process at the other end of a Unix
// socket, as the kernel recorded it at connect (SO_PEERCRED).
func rawPeerUID(fd int) (uint32, error) {
	var cred unix.Ucred
	size := uint32(unsafe.Sizeof(cred))
	_, _, e := unix.RawSyscall6(unix.SYS_GETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_PEERCRED, uintptr(unsafe.Pointer(&cred)), uintptr(unsafe.Pointer(&size)), 0)
	return cred.Uid, errnoErr(e)
}

// rawClose closes a socket (one without SO_LINGER: its close does not
// wait).
func rawClose(fd int) {
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}
