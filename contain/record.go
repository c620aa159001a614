package contain

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"time"

	"github.com/tether-run/tether/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// tracker keeps a run's registry record (a nil *tracker does nothing), so
// that a crash of this program at any point leaves something reap can act
// on: written before the containment exists, completed before the command
// is spawned, marked at each later step, and deleted once the stop is
// confirmed.
type tracker struct {
	reg *registry.Registry
	rec registry.Record
}

// newTracker writes the starting record of the run r describes.
func newTracker(reg *registry.Registry, r *receipt.Receipt) (*tracker, error) {
	self, err := identity.OpenPID(os.Getpid())
	if err != nil {
		return nil, err
	}
	self.Close()
	var b [6]byte
	rand.Read(b[:])
	now := time.Now().UTC()
	t := &tracker{reg: reg, rec: registry.Record{
		Name: "run-" + hex.EncodeToString(b[:]), Kind: "run", State: registry.StateStarting, RunID: r.RunID,
		Argv: r.Argv, Cwd: r.Cwd, CreatedAt: now, UpdatedAt: now, Owner: "none",
		Supervisor: self.Token.String(), Until: string(ReasonMainExit),
	}}
	return t, reg.Write(&t.rec)
}

func (t *tracker) write() error {
	t.rec.UpdatedAt = time.Now().UTC()
	return t.reg.Write(&t.rec)
}

// prepared records the containment before the command is spawned.
func (t *tracker) prepared(r *receipt.Receipt) error {
	if t == nil {
		return nil
	}
	t.rec.SetContainment(r)
	return t.write()
}

// started records the main process.
func (t *tracker) started(r *receipt.Receipt) {
	if t == nil {
		return
	}
	t.rec.State = registry.StateRunning
	if r.Main != nil {
		t.rec.Main = r.Main.Token
	}
	t.write()
}

// stopping marks the stop protocol's start.
func (t *tracker) stopping(reason Reason) {
	if t == nil {
		return
	}
	t.rec.State, t.rec.StopReason = registry.StateStopping, string(reason)
	t.write()
}

// finish deletes the record of a confirmed stop, or keeps it marked with
// what went wrong, for reap.
func (t *tracker) finish(r *receipt.Receipt, err error) {
	if t == nil {
		return
	}
	if r.StopConfirmed {
		t.reg.Delete(t.rec.Name)
		return
	}
	t.rec.State = registry.StateStopping
	if err != nil {
		t.rec.Error = err.Error()
	}
	t.write()
}
