package delegate

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

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
func dial(ctx context.Context, m Manager) (*bus, error) {
	var c *dbus.Conn
	var err error
	switch {
	case m == ManagerUser:
		sock := userSocket()
		if _, err := os.Stat(sock); err != nil {
			return nil, fmt.Errorf("no user manager for uid %d: %w (log in, or enable lingering: loginctl enable-linger)", os.Getuid(), err)
		}
		c, err = dialPrivate(ctx, sock)
	case os.Geteuid() == 0:
		c, err = dialPrivate(ctx, "/run/systemd/private")
	default:
		c, err = dbus.SystemBusPrivate(dbus.WithContext(ctx))
		if err == nil {
			if err = auth(c); err == nil {
				err = c.Hello()
			}
			if err != nil {
				c.Close()
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return &bus{conn: c, mgr: c.Object(sdDest, sdPath)}, nil
}

func dialPrivate(ctx context.Context, sock string) (*dbus.Conn, error) {
	c, err := dbus.Dial("unix:path="+sock, dbus.WithContext(ctx))
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

// startTransient starts a transient unit and waits for its job to end:
// "done" is success, any other result an error.
//
// systemd sends every signal to a direct connection, and godbus stalls the
// connection while a signal channel is full, so signals are drained by a
// goroutine for as long as the exchange lasts, keeping only JobRemoved.
func (b *bus) startTransient(ctx context.Context, name string, props []property) error {
	jobs := newJobWatch(b.conn)
	defer jobs.stop()
	var job dbus.ObjectPath
	aux := []struct {
		Name  string
		Props []property
	}{}
	if err := b.mgr.CallWithContext(ctx, sdManager+".StartTransientUnit", 0, name, "fail", props, aux).Store(&job); err != nil {
		return err
	}
	r, err := jobs.wait(ctx, job)
	if err != nil {
		return err
	}
	if r != "done" {
		return fmt.Errorf("job %s", r)
	}
	return nil
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

func (w *jobWatch) wait(ctx context.Context, job dbus.ObjectPath) (string, error) {
	for {
		w.mu.Lock()
		r, ok := w.done[job]
		w.mu.Unlock()
		if ok {
			return r, nil
		}
		select {
		case <-w.wake:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

func (w *jobWatch) stop() {
	w.conn.RemoveSignal(w.ch)
	close(w.quit)
}

// delegates asks for the Delegate property of a loaded unit.
func (b *bus) delegates(ctx context.Context, unit string) (bool, error) {
	var path dbus.ObjectPath
	if err := b.mgr.CallWithContext(ctx, sdManager+".GetUnit", 0, unit).Store(&path); err != nil {
		return false, err
	}
	iface := "org.freedesktop.systemd1.Scope"
	if strings.HasSuffix(unit, ".service") {
		iface = "org.freedesktop.systemd1.Service"
	}
	var v dbus.Variant
	if err := b.conn.Object(sdDest, path).CallWithContext(ctx, "org.freedesktop.DBus.Properties.Get", 0, iface, "Delegate").Store(&v); err != nil {
		return false, err
	}
	d, ok := v.Value().(bool)
	if !ok {
		return false, fmt.Errorf("%s: Delegate is %s, not a boolean", unit, v.Signature())
	}
	return d, nil
}
