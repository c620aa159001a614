package delegate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/godbus/dbus/v5"
)

// bus is one connection to a systemd manager. godbus is used directly,
// not through go-systemd's dbus package: that opens and authenticates a
// second connection for signals on every Conn, a cost paid on each run
// that needs a scope, for the two calls tether makes.
type bus struct {
	conn    *dbus.Conn
	mgr     dbus.BusObject
	signals chan *dbus.Signal
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
	b := &bus{conn: c, mgr: c.Object(sdDest, sdPath), signals: make(chan *dbus.Signal, 16)}
	c.Signal(b.signals)
	return b, nil
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
func (b *bus) startTransient(ctx context.Context, name string, props []property) error {
	var job dbus.ObjectPath
	aux := []struct {
		Name  string
		Props []property
	}{}
	if err := b.mgr.CallWithContext(ctx, sdManager+".StartTransientUnit", 0, name, "fail", props, aux).Store(&job); err != nil {
		return err
	}
	for {
		select {
		case s := <-b.signals:
			if s == nil {
				return errors.New("connection to the manager closed")
			}
			if s.Name != sdManager+".JobRemoved" || len(s.Body) < 4 {
				continue
			}
			if p, _ := s.Body[1].(dbus.ObjectPath); p != job {
				continue
			}
			if r, _ := s.Body[3].(string); r != "done" {
				return fmt.Errorf("job %s", r)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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
