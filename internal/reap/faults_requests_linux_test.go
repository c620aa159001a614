package reap_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/sessionctl"
)

// TestFaultStaleRequests: `tether reap` removes a stop request left for a
// supervisor that is gone (a `tether stop` killed in its wait leaves one)
// once it is older than reap.StaleAge, and the temp file of an interrupted
// request write; it keeps a request whose supervisor lives (that one takes
// it at its next wake-up), and reports a young one without removing it.
// --dry-run removes nothing.
func TestFaultStaleRequests(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	if r, _ := f.reap(); r.code != 0 { // makes the state dir
		t.Fatalf("tether reap = %s: %s", r, r.stderr)
	}
	live, dead := exec.Command("sleep", "1000"), exec.Command("sleep", "1000")
	for _, c := range []*exec.Cmd{live, dead} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	liveTok, err1 := identity.Of(live.Process.Pid)
	deadTok, err2 := identity.Of(dead.Process.Pid)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	dead.Process.Kill()
	dead.Wait()

	dir := filepath.Join(f.state, "requests")
	put := func(file, sup string, age time.Duration) string {
		b, _ := json.Marshal(sessionctl.StopRequest{Reason: "request", Supervisor: sup})
		p := filepath.Join(dir, file)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := 2 * reap.StaleAge
	oldDead := put(sessionctl.RequestPrefix(deadTok.String())+"1-a.json", deadTok.String(), old)
	youngDead := put(sessionctl.RequestPrefix(deadTok.String())+"2-b.json", deadTok.String(), 0)
	oldLive := put(sessionctl.RequestPrefix(liveTok.String())+"3-c.json", liveTok.String(), old)
	tmp := put(".stop-x.json.tmp0123", "", old)

	f.checkStale("request", []staleWant{
		{oldDead, removed},
		{tmp, removed},
		{youngDead, reported},
		{oldLive, untouched},
	})
}

// staleWant is what a reap must do with a file: remove it (and list
// it), only list it (too young), or neither.
type staleWant struct {
	path string
	do   int
}

const (
	untouched = iota
	reported
	removed
)

// checkStale runs `tether reap --dry-run`, which must remove nothing of
// wants, then `tether reap`, which must do with each what it says, the
// actions listed with kind.
func (f *faultEnv) checkStale(kind string, wants []staleWant) {
	t := f.t
	t.Helper()
	exist := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	if r, _ := f.reap("--dry-run"); r.code != 0 {
		t.Errorf("tether reap --dry-run = %s: %s", r, r.stderr)
	}
	for _, w := range wants {
		if !exist(w.path) {
			t.Fatalf("tether reap --dry-run removed %s", w.path)
		}
	}
	r, rep := f.reap()
	if r.code != 0 {
		t.Errorf("tether reap = %s: %s", r, r.stderr)
	}
	for _, w := range wants {
		name := filepath.Base(w.path)
		if exist(w.path) != (w.do != removed) {
			t.Errorf("%s: exists %t, want %t", name, exist(w.path), w.do != removed)
		}
		a := faultAction(rep, name)
		if (a != nil) != (w.do != untouched) || a != nil && (a.Class != reap.Stale || a.Kind != kind || a.Done != (w.do == removed)) {
			t.Errorf("%s: action %+v; want listed %t, stale, kind %s, done %t", name, a, w.do != untouched, kind, w.do == removed)
		}
	}
}
