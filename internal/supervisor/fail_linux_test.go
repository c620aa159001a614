package supervisor

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// TestFailKeepsUnconfirmedRuntimeDir (issue 9): a session that failed
// after its command ran, and whose stop was not confirmed, keeps its
// runtime dir and a live record saying why, for tether reap; a failure
// with nothing left running releases both.
func TestFailKeepsUnconfirmedRuntimeDir(t *testing.T) {
	for _, confirmed := range []bool{true, false} {
		dir := t.TempDir()
		os.Chmod(dir, 0o700)
		reg, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		rt, err := reg.Claim("s")
		if err != nil {
			t.Fatal(err)
		}
		rec := &registry.Record{Name: "s", Kind: "session", State: registry.StateStarting, RuntimeDir: rt}
		var got sessionctl.ReadyReport
		fail(&recorder{reg: reg, rec: rec}, func(r sessionctl.ReadyReport) { got = r }, errors.New("record: no space left on device"), 125, confirmed)
		on, err := reg.Read("s")
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(rt)
		kept := statErr == nil
		if kept == confirmed || on.Live() == confirmed {
			t.Errorf("fail(confirmed=%t): runtime dir kept %t, record live %t (state %s); want %t, %t", confirmed, kept, on.Live(), on.State, !confirmed, !confirmed)
		}
		if !confirmed && !strings.Contains(on.Error, "not confirmed") {
			t.Errorf("fail(confirmed=false): record error = %q, want it to say the stop was not confirmed", on.Error)
		}
		if got.OK || got.Code != 125 || got.Error == "" {
			t.Errorf("fail(confirmed=%t) reported %+v, want the error with code 125", confirmed, got)
		}
	}
}
