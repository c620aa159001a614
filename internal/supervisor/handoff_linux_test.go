package supervisor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/receipt"
)

// TestSuperviseAbandoned: a supervisor whose client closes the hand-off
// without its go (the start failed before the claim: the name in use, the
// owner gone) exits at once with status 0 and no report, having removed
// the log it opened beside the claim and written nothing in the state dir
// of the session's name: no record, no runtime dir, no receipt. Three
// points: before the spec, after the spec, and after a spec it refused.
func TestSuperviseAbandoned(t *testing.T) {
	spec := sessionctl.Spec{Name: "s", RunID: receipt.NewRunID(), Argv: []string{"sleep", "1000"}, Owner: "none",
		Until: sessionctl.UntilMainExit, LogMax: 1 << 20, LogKeep: 2}
	good, _ := json.Marshal(spec)
	bad := bytes.Replace(good, []byte(`"name":"s"`), []byte(`"name":"t"`), 1)
	for _, tc := range []struct {
		name string
		sent func(w *os.File)
	}{
		{"before the spec", func(w *os.File) {}},
		{"after the spec", func(w *os.File) { SendSpec(w, good) }},
		{"after a refused spec", func(w *os.File) { SendSpec(w, bad) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := newRegistry(t)
			inR, inW, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			l, rd := spawn(t, reg, spec.Name, inR, &stderr)
			defer rd.Close()
			inR.Close()
			tc.sent(inW)
			if tc.name == "after the spec" {
				// Its log is made beside the claim: wait for it, so that
				// the abandon has something to remove.
				waitFor(t, func() bool { return len(logFiles(t, reg.Dir)) > 0 }, "the supervisor's log")
			}
			inW.Close()
			select {
			case <-l.exited:
				if l.waitErr != nil {
					t.Fatalf("abandoned supervisor: %v (stderr %q), want exit 0", l.waitErr, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the supervisor did not exit within 10 s of its hand-off's close")
			}
			if line, _ := bufio.NewReader(rd).ReadString('\n'); line != "" {
				t.Errorf("report %q, want none", line)
			}
			if fs := logFiles(t, reg.Dir); len(fs) > 0 {
				t.Errorf("logs left: %v", fs)
			}
			if _, err := reg.Read(spec.Name); err == nil {
				t.Error("a record of the name was written")
			}
			for _, p := range []string{reg.RuntimeDir(spec.Name), filepath.Join(reg.Dir, "receipts")} {
				if ents, _ := os.ReadDir(p); len(ents) > 0 {
					t.Errorf("%s: %d entries, want none", p, len(ents))
				}
			}
		})
	}
}

// logFiles lists the session logs in the state dir.
func logFiles(t *testing.T, state string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(state, "logs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			out = append(out, e.Name())
		}
	}
	return out
}

// waitFor polls ok every 5 ms for up to 10 s.
func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("no %s within 10 s", what)
}
