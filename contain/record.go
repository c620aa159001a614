package contain

import (
	"os"
	"sync"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// tracker keeps a run's registry record (a nil *tracker does nothing), so
// that a crash of this program at any point leaves something reap can act
// on. The record is written once, when the containment exists and before
// the command is spawned, and deleted once the stop is confirmed: the
// states in between are ones only a live program can be in, and reap
// decides a dead one's run from the leaf and the identities alone (issue
// 13). A crash before the write leaves nothing, or an empty leaf no
// record names, which reap's orphan sweep reports and removes.
type tracker struct {
	reg     *store.Registry
	owned   bool // reg was opened for the run: finish closes it
	rec     registry.Record
	written bool
	ended   bool
}

// newTracker prepares the record of the run r describes; nothing is
// written yet.
func newTracker(reg *store.Registry, r *receipt.Receipt) (*tracker, error) {
	self, err := selfToken()
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	return &tracker{reg: reg, rec: registry.Record{
		Name: "run-" + randid.Hex(6), Kind: "run", State: registry.StateRunning, RunID: r.RunID,
		Argv: r.Argv, Cwd: r.Cwd, CreatedAt: now, UpdatedAt: now, Owner: "none",
		Supervisor: self, Until: string(ReasonMainExit),
	}}, nil
}

// selfToken is this process's identity token. A process's token never
// changes, so it is read once.
var selfToken = sync.OnceValues(func() (string, error) {
	h, err := identity.OpenPID(os.Getpid())
	if err != nil {
		return "", err
	}
	defer h.Close()
	return h.Token.String(), nil
})

func (t *tracker) write() error {
	t.rec.UpdatedAt = time.Now().UTC()
	write := t.reg.Write
	if !t.written {
		write = t.reg.Create // the name is new: no record of it to replace
	}
	if err := write(&t.rec); err != nil {
		return err
	}
	t.written = true
	return nil
}

// prepared writes the record, with the containment and the fallback's
// group marker, before the command is spawned.
func (t *tracker) prepared(r *receipt.Receipt, marker string) error {
	if t == nil {
		return nil
	}
	store.SetContainment(&t.rec, r)
	t.rec.Marker = marker
	return t.write()
}

// started records the main process where no leaf holds the run (the
// fallback, Windows): reap can then stop the main process by its token,
// and its descendants by the group marker recorded by prepared.
// With a leaf, the leaf is what reap acts on, and nothing is written.
func (t *tracker) started(r *receipt.Receipt) {
	if t == nil || t.rec.Cgroup != "" || r.Main == nil {
		return
	}
	t.rec.Main = r.Main.Token
	t.write()
}

// finish deletes the record of a confirmed stop, or keeps it marked with
// what went wrong, for reap; then it closes the state dir it opened. A run ends
// once: a start aborted after its process ran calls it twice (the
// protocol's end, then the failed start's), and the first stands.
func (t *tracker) finish(r *receipt.Receipt, err error) {
	if t == nil || t.ended {
		return
	}
	t.ended = true
	if t.owned {
		defer t.reg.Close()
	}
	if r.StopConfirmed {
		if t.written {
			t.reg.Delete(t.rec.Name)
		}
		return
	}
	t.rec.State = registry.StateStopping
	if r.Stop.Reason != "" {
		t.rec.StopReason = r.Stop.Reason
	}
	if err != nil {
		t.rec.Error = err.Error()
	}
	t.write()
}
