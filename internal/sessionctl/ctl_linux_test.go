package sessionctl

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// openReg opens a fresh state dir of t's.
func openReg(t *testing.T) *store.Registry {
	t.Helper()
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	reg, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	return reg
}

// write records rec in reg.
func write(t *testing.T, reg *store.Registry, rec *registry.Record) {
	t.Helper()
	now := time.Now().UTC()
	rec.Kind, rec.CreatedAt, rec.UpdatedAt = "session", now, now
	if rec.State == "" {
		rec.State = registry.StateRunning
	}
	if err := reg.Write(rec); err != nil {
		t.Fatal(err)
	}
}

// TestFamily: the sessions owned, directly or through others, by a
// supervisor come children before parents; a stranger (owned by nobody
// of the family) and an ended session are left out.
func TestFamily(t *testing.T) {
	reg := openReg(t)
	write(t, reg, &registry.Record{Name: "child", Supervisor: "sup-child", OwnerToken: "sup-root"})
	write(t, reg, &registry.Record{Name: "grandchild", Supervisor: "sup-grand", OwnerToken: "sup-child"})
	write(t, reg, &registry.Record{Name: "stranger", Supervisor: "sup-x", OwnerToken: "sup-y"})
	write(t, reg, &registry.Record{Name: "ended", Supervisor: "sup-e", OwnerToken: "sup-root", State: registry.StateStopped})
	var got []string
	for _, r := range Family(reg, "sup-root") {
		got = append(got, r.Name)
	}
	if want := []string{"grandchild", "child"}; !slices.Equal(got, want) {
		t.Errorf("Family = %q, want %q", got, want)
	}
}

// TestSupervisorOf: a live supervisor's token gives a handle to it; a
// dead one's, none or junk is ErrUnsupervised.
func TestSupervisorOf(t *testing.T) {
	p := exec.Command("sleep", "1000")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	h, err := identity.OpenPID(p.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	tok := h.Token.String()
	h.Close()
	got, err := SupervisorOf(&registry.Record{Name: "s", Supervisor: tok})
	if err != nil || got.Token.PID != p.Process.Pid {
		t.Errorf("SupervisorOf(a live token) = %v, %v; want a handle to pid %d", got, err, p.Process.Pid)
	}
	if got != nil {
		got.Close()
	}
	p.Process.Kill()
	p.Wait()
	for _, sup := range []string{tok, "", "junk"} {
		if _, err := SupervisorOf(&registry.Record{Name: "s", Supervisor: sup}); !errors.Is(err, ErrUnsupervised) {
			t.Errorf("SupervisorOf(%q) = %v, want ErrUnsupervised", sup, err)
		}
	}
}

// TestStopManyEnded: StopMany of an ended session returns its receipt
// without asking anyone; of an unknown name, registry.ErrNotFound.
func TestStopManyEnded(t *testing.T) {
	reg := openReg(t)
	rp, err := reg.WriteReceipt("done", "0123456789abcdef0123456789abcdef", []byte(`{"run_id":"0123456789abcdef0123456789abcdef","stop_confirmed":true}`))
	if err != nil {
		t.Fatal(err)
	}
	write(t, reg, &registry.Record{Name: "done", RunID: "0123456789abcdef0123456789abcdef", State: registry.StateStopped, Receipt: rp})
	res := StopMany(reg, []string{"done", "nobody"}, StopRequest{Reason: "request"}, 10*time.Second, nil, nil, nil)
	if res[0].Err != nil || res[0].Receipt == nil || !res[0].Receipt.StopConfirmed {
		t.Errorf("StopMany(ended) = %+v, want its receipt", res[0])
	}
	if !errors.Is(res[1].Err, registry.ErrNotFound) {
		t.Errorf("StopMany(unknown) = %+v, want ErrNotFound", res[1])
	}
}
