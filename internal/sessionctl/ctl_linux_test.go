package sessionctl

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
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

// TestInboxTake: what a process of the user's leaves in the requests dir
// can neither block nor redirect the supervisor's reads (issue 22): a FIFO is not
// listed, a symlink is not followed and its target is left alone, and
// every entry taken is removed.
func TestInboxTake(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	target := filepath.Join(other, "target")
	os.WriteFile(target, []byte("secret"), 0o600)
	os.WriteFile(filepath.Join(dir, "stop-1.json"), []byte(`{"reason":"request"}`), 0o600)
	if err := syscall.Mkfifo(filepath.Join(dir, "stop-2.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink(target, filepath.Join(dir, "stop-3.json"))
	d, err := OpenInbox(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := d.Names(); !slices.Equal(got, []string{"stop-1.json"}) {
		t.Errorf("Names = %q, want the regular file only", got)
	}
	if b, err := d.Take("stop-1.json", 1<<10); err != nil || string(b) != `{"reason":"request"}` {
		t.Errorf("Take(a regular file) = %q, %v", b, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := d.Take("stop-2.json", 1<<10); err == nil {
			t.Error("Take(a FIFO) succeeded")
		}
		if b, err := d.Take("stop-3.json", 1<<10); err == nil {
			t.Errorf("Take(a symlink) = %q, want refused", b)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Take blocked on a FIFO")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in the runtime dir: %v, want every taken entry removed", ents)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "secret" {
		t.Errorf("the symlink's target: %q, %v; want it untouched", b, err)
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
