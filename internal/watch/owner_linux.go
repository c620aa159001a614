package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// owner is this process's side: one connection to a watcher while it has
// groups, and the groups it told the watcher of (sent again to a new
// watcher if the one it had dies).
var owner struct {
	mu      sync.Mutex
	conn    *conn
	dir     string
	next    uint64
	pending map[uint64]*Group
}

// conn is a connection to a watcher, held as a bare blocking socket: in
// the runtime's poller, it woke every idle thread of a short run through
// epoll for nothing (issue 24's cost, BENCHMARKS.md).
type conn struct {
	fd int
	// follow is the timer that starts reading the connection; following
	// says it did, and then the reader closes fd (close would not wake a
	// read under way, and fd's number could be reused under it).
	follow    *time.Timer
	following bool
}

// followAfter is how long a connection is written to before a goroutine
// reads it for the watcher's death: a short run ends before it and never
// pays for the thread a blocked read holds. A watcher that died or was
// exiting within it is found then, and replaced.
const followAfter = 20 * time.Millisecond

// Add tells a watcher about g, before its command is spawned, and returns
// the id Done takes. dir is the state dir whose watcher to use ("" for a
// watcher of this process's own). The message is queued in the socket:
// once Add returns, the owner's death at any later instant stops g.
func Add(dir string, g Group) (uint64, error) {
	owner.mu.Lock()
	defer owner.mu.Unlock()
	if owner.pending == nil {
		owner.pending = map[uint64]*Group{}
	}
	owner.next++
	id := owner.next
	owner.pending[id] = &g
	if owner.conn == nil {
		owner.dir = dir
		if err := connect(); err != nil {
			delete(owner.pending, id)
			return 0, err
		}
		return id, nil // connect sent every pending group
	}
	if err := send(owner.conn, message{V: version, Op: "add", ID: id, Group: &g}); err != nil {
		// The watcher died: a new one gets every group still pending.
		hangUp()
		if err := connect(); err != nil {
			delete(owner.pending, id)
			return 0, err
		}
	}
	return id, nil
}

// Done says the group id was stopped by its owner. After the last, the
// connection closes: a watcher is not kept for a process with nothing to
// watch.
func Done(id uint64) {
	owner.mu.Lock()
	defer owner.mu.Unlock()
	if _, ok := owner.pending[id]; !ok {
		return
	}
	delete(owner.pending, id)
	if owner.conn == nil {
		return
	}
	send(owner.conn, message{V: version, Op: "done", ID: id})
	if len(owner.pending) == 0 {
		hangUp()
	}
}

// hangUp ends the connection. Called with owner.mu held.
func hangUp() {
	c := owner.conn
	owner.conn = nil
	c.follow.Stop()
	if c.following {
		unix.Shutdown(c.fd, unix.SHUT_RDWR) // wakes the reader, which closes fd
		return
	}
	unix.Close(c.fd)
}

// send writes one message on c (a timeout of its own bounds a watcher
// that stopped reading). Called with owner.mu held.
func send(c *conn, m message) error { return writeAll(c.fd, encode(m)) }

// writeAll writes b on the socket fd.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return os.NewSyscallError("write", err)
		}
		b = b[n:]
	}
	return nil
}

// encode writes m as the JSON line the watcher reads. A group with its
// record in a registry, tether's own case, is written by hand: the first
// use of encoding/json costs a short-lived process (tether run) a
// noticeable part of its life (issue 13).
func encode(m message) []byte {
	g := m.Group
	if g != nil && g.Record != nil {
		b, _ := json.Marshal(m)
		return append(b, '\n')
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(m.V), 10)
	b = append(b, `,"op":`...)
	b = appendString(b, m.Op)
	b = append(b, `,"id":`...)
	b = strconv.AppendUint(b, m.ID, 10)
	if g != nil {
		b = append(b, `,"group":{"registry":`...)
		b = appendString(b, g.Registry)
		b = append(b, `,"name":`...)
		b = appendString(b, g.Name)
		b = append(b, `,"receipt":`...)
		b = appendString(b, g.Receipt)
		b = append(b, `,"reason":`...)
		b = appendString(b, g.Reason)
		b = append(b, `,"grace_ms":`...)
		b = strconv.AppendInt(b, g.GraceMS, 10)
		b = append(b, '}')
	}
	return append(b, "}\n"...)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c == 0x7f:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// connect connects to the state dir's watcher, or starts one, and sends
// every pending group. Called with owner.mu held.
func connect() error {
	var b []byte
	for id, g := range owner.pending {
		b = append(b, encode(message{V: version, Op: "add", ID: id, Group: g})...)
	}
	fd, err := dial(owner.dir)
	if err != nil {
		if fd, b, err = spawn(owner.dir, b); err != nil {
			return fmt.Errorf("watch: no watcher for the owner's death: %w", err)
		}
	}
	// A watcher that stops reading fails a write in 5 s, not never.
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{Sec: 5})
	if err := writeAll(fd, b); err != nil {
		unix.Close(fd)
		return fmt.Errorf("watch: %w", err)
	}
	c := &conn{fd: fd}
	owner.conn = c
	c.follow = time.AfterFunc(followAfter, func() { follow(c) })
	return nil
}

// follow reads the watcher's side until it ends; a watcher that dies while
// groups are pending is replaced, and told of them again.
func follow(c *conn) {
	owner.mu.Lock()
	if owner.conn != c {
		owner.mu.Unlock()
		return // hung up before the timer fired: fd is closed already
	}
	c.following = true
	owner.mu.Unlock()
	var b [64]byte
	for {
		n, err := unix.Read(c.fd, b[:])
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
	}
	owner.mu.Lock()
	defer owner.mu.Unlock()
	unix.Close(c.fd)
	if owner.conn != c {
		return // hung up by Done, or replaced already
	}
	owner.conn = nil
	if len(owner.pending) > 0 {
		// The watcher died, was exiting, or does not speak our version:
		// one of our own (listening nowhere) takes every pending group.
		owner.dir = ""
		connect()
	}
}

// Spawn starts the watcher process cmd. A program that reaps orphans
// itself (contain, a child subreaper) replaces it to start cmd under its
// own bookkeeping, so that the watcher is never taken for an orphan of a
// group; it returns a func to call once cmd was reaped.
var Spawn = func(cmd *exec.Cmd) (reaped func(), err error) { return func() {}, cmd.Start() }

// sockName is the watcher's socket in a state dir.
const sockName = "watch.sock"

// dial connects to the watcher listening in dir, if one does and it is
// ours (same uid), and returns the socket.
func dial(dir string) (int, error) {
	if dir == "" {
		return -1, errors.New("no state dir")
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	// Through /proc/self/fd: no sun_path limit, no symlink followed.
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: "/proc/self/fd/" + strconv.Itoa(dfd) + "/" + sockName}); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("connect", err)
	}
	if err := checkPeer(fd); err != nil {
		unix.Close(fd)
		return -1, err
	}
	// No round trip: what is sent is queued for the watcher. One that
	// was exiting, or speaks another version, closes the connection, and
	// follow then starts a watcher of our own.
	return fd, nil
}

// checkPeer admits only a peer of our own uid: the owner's check of its
// watcher, and the watcher's of each owner.
func checkPeer(fd int) error {
	uid, err := rawPeerUID(fd)
	if err != nil {
		return err
	}
	if int(uid) != os.Geteuid() {
		return fmt.Errorf("watch: peer uid %d is not %d", uid, os.Geteuid())
	}
	return nil
}

// spawn starts a watcher — this program, re-executed, served by Serve
// before its main runs — with a connection already made, and returns it
// and what of queue is left to write. It runs in a session of its own (a
// signal to our process group does not reach it) and outside every group
// (it is started by the owner, never into a leaf).
//
// What the watcher is to be told (queue: the pending groups) is written
// into the connection before the watcher exists, as far as the socket's
// buffer takes it: an owner that dies the instant its new watcher runs —
// it was replacing one that died — has told it of its groups already.
func spawn(dir string, queue []byte) (int, []byte, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, nil, os.NewSyscallError("socketpair", err)
	}
	for len(queue) > 0 {
		n, err := unix.SendmsgN(fds[0], queue, nil, nil, unix.MSG_DONTWAIT)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			break // full (EAGAIN): the rest once the watcher reads
		}
		queue = queue[n:]
	}
	theirs := os.NewFile(uintptr(fds[1]), "watch")
	defer theirs.Close()
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"tether-watch"}
	cmd.Env = []string{Env + "=" + dir}
	// The test harness's: how long to linger, the leak check's mark, and
	// where a race-built watcher reports a race.
	for _, k := range []string{LingerEnv, "TETHER_LEAKCHECK", "GORACE"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	reaped, err := Spawn(cmd)
	if err != nil {
		unix.Close(fds[0])
		return -1, nil, err
	}
	go func() {
		cmd.Wait() // reaped when it exits while we live
		reaped()
	}()
	return fds[0], queue, nil
}
