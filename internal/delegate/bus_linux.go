package delegate

import (
	"context"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

// bus is one connection to a systemd manager. godbus is used directly,
// not through go-systemd's dbus package: that opens and authenticates a
// second connection for signals on every Conn, a cost paid on each run
// that needs a scope, for the two calls tether makes.
type bus struct {
	conn *dbus.Conn
	mgr  dbus.BusObject
}

const (
	sdDest    = "org.freedesktop.systemd1"
	sdPath    = dbus.ObjectPath("/org/freedesktop/systemd1")
	sdManager = "org.freedesktop.systemd1.Manager"
)

// dial connects to manager m: to its private socket where we may use it
// (no bus daemon needed, no Hello round trip, and systemd sends every
// signal to direct connections), else to the system bus.
//
// The connection lives until close, not until ctx ends (godbus closes a
// connection whose context is done, and one connection serves several
// calls, each bounded by its own context); ctx bounds only the dial and
// the authentication.
func dial(ctx context.Context, m Manager) (*bus, error) {
	type result struct {
		c   *dbus.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := connect(m)
		done <- result{c, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		return &bus{conn: r.c, mgr: r.c.Object(sdDest, sdPath)}, nil
	case <-ctx.Done():
		go func() {
			if r := <-done; r.c != nil {
				r.c.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// connect opens and authenticates a connection to manager m.
func connect(m Manager) (*dbus.Conn, error) {
	switch {
	case m == ManagerUser:
		sock := userSocket()
		if _, err := os.Stat(sock); err != nil {
			return nil, fmt.Errorf("no user manager for uid %d: %w (log in, or enable lingering: loginctl enable-linger)", os.Getuid(), err)
		}
		return dialPrivate(sock)
	case os.Geteuid() == 0:
		return dialPrivate("/run/systemd/private")
	}
	c, err := dbus.SystemBusPrivate()
	if err == nil {
		if err = auth(c); err == nil {
			err = c.Hello()
		}
		if err != nil {
			c.Close()
		}
	}
	return c, err
}

func dialPrivate(sock string) (*dbus.Conn, error) {
	c, err := dbus.Dial("unix:path=" + sock)
	if err != nil {
		return nil, err
	}
	if err := auth(c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// auth uses EXTERNAL with the numeric uid (no user name lookup, which
// would need libc in a static binary).
func auth(c *dbus.Conn) error {
	return c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))})
}

func (b *bus) close() { b.conn.Close() }

// property is one (sv) of StartTransientUnit.
type property struct {
	Name  string
	Value dbus.Variant
}

func prop(name string, v any) property { return property{name, dbus.MakeVariant(v)} }

// startTransient starts a transient scope holding this process and waits
// until it runs: its job's JobRemoved says "done", or the process is seen
// in the scope's cgroup (the scope's start moves it there). The second
// keeps a lost reply or signal from costing the whole timeout: over
// repeated runs in the VM, about one call in ten on a direct connection
// never got its reply (the reason is not known; runc's systemd driver
// likewise goes on when the JobRemoved signal does not come).
func (b *bus) startTransient(ctx context.Context, name string, props []property) error {
	jobs := newJobWatch(b.conn)
	defer jobs.stop()
	aux := []struct {
		Name  string
		Props []property
	}{}
	call := b.mgr.GoWithContext(ctx, sdManager+".StartTransientUnit", 0, make(chan *dbus.Call, 1), name, "fail", props, aux)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var job dbus.ObjectPath
	for {
		if job != "" {
			if r, ok := jobs.result(job); ok {
				if r != "done" {
					return fmt.Errorf("job %s", r)
				}
				return nil
			}
		}
		select {
		case c := <-call.Done:
			if err := c.Store(&job); err != nil {
				return err
			}
		case <-jobs.wake:
		case <-tick.C:
			if inUnit(name) {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// inUnit reports whether this process is in the cgroup of unit name.
func inUnit(name string) bool {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rel, ok := strings.CutPrefix(l, "0::"); ok && path.Base(rel) == name {
			return true
		}
	}
	return false
}

// jobWatch collects the results of ended jobs from JobRemoved signals.
type jobWatch struct {
	conn *dbus.Conn
	ch   chan *dbus.Signal
	mu   sync.Mutex
	done map[dbus.ObjectPath]string
	wake chan struct{}
	quit chan struct{}
}

func newJobWatch(c *dbus.Conn) *jobWatch {
	w := &jobWatch{conn: c, ch: make(chan *dbus.Signal, 64), done: map[dbus.ObjectPath]string{},
		wake: make(chan struct{}, 1), quit: make(chan struct{})}
	c.Signal(w.ch)
	go w.drain()
	return w
}

func (w *jobWatch) drain() {
	for {
		select {
		case s, ok := <-w.ch:
			if !ok {
				return
			}
			if s.Name != sdManager+".JobRemoved" || len(s.Body) < 4 {
				continue
			}
			p, _ := s.Body[1].(dbus.ObjectPath)
			r, _ := s.Body[3].(string)
			w.mu.Lock()
			w.done[p] = r
			w.mu.Unlock()
			select {
			case w.wake <- struct{}{}:
			default:
			}
		case <-w.quit:
			return
		}
	}
}

// result returns the result of job once its JobRemoved was seen.
func (w *jobWatch) result(job dbus.ObjectPath) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.done[job]
	return r, ok
}

func (w *jobWatch) stop() {
	w.conn.RemoveSignal(w.ch)
	close(w.quit)
}

// delegates asks for the Delegate property of a loaded unit, at the
// unit's object path (systemd's escaped unit name). GetUnit is not used:
// in the VM it lost its reply in about one call in ten.
func (b *bus) delegates(ctx context.Context, unit string) (bool, error) {
	iface := "org.freedesktop.systemd1.Scope"
	if strings.HasSuffix(unit, ".service") {
		iface = "org.freedesktop.systemd1.Service"
	}
	var v dbus.Variant
	if err := b.conn.Object(sdDest, unitPath(unit)).CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, iface, "Delegate").Store(&v); err != nil {
		return false, err
	}
	d, ok := v.Value().(bool)
	if !ok {
		return false, fmt.Errorf("%s: Delegate is %s, not a boolean", unit, v.Signature())
	}
	return d, nil
}

// unitPath is the object path systemd gives unit: its name with every
// byte but ASCII letters and digits (and a leading digit) written as _XX
// in hex (systemd's bus_label_escape).
func unitPath(unit string) dbus.ObjectPath {
	var sb strings.Builder
	sb.WriteString("/org/freedesktop/systemd1/unit/")
	for i := 0; i < len(unit); i++ {
		c := unit[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum || i == 0 && c >= '0' && c <= '9' {
			fmt.Fprintf(&sb, "_%02x", c)
			continue
		}
		sb.WriteByte(c)
	}
	return dbus.ObjectPath(sb.String())
}
