package sessionctl

import (
	"encoding/json"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzSpec: any spec.json is a spec the supervisor can run as written, or
// an error, never a panic.
func FuzzSpec(f *testing.F) {
	good, _ := json.Marshal(Spec{Name: "web", Argv: []string{"sleep", "1"}, Until: UntilMainExit, StopSignal: "SIGTERM", LogMax: 8 << 20, LogKeep: 4})
	f.Add(good)
	for _, s := range []string{`{}`, `null`, `{"name":"web","argv":[],"until":"main-exit"}`, `{"name":"web","argv":["x"],"until":"never"}`,
		`{"name":"web","argv":["x"],"until":"empty","ttl":-1}`, `{"name":"web","argv":["x"],"until":"empty","stop_signal":"SIGNOPE"}`,
		`{"name":"web","argv":["x"],"until":"empty","limits":{"CPUs":-1}}`, `{"name":"web","argv":["x"],"until":"empty","pool":".p"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSpec(b, "web")
		if err != nil {
			return
		}
		if s.Name != "web" || len(s.Argv) == 0 || (s.Until != UntilMainExit && s.Until != UntilEmpty) || s.TTL < 0 || s.Limits.Validate() != nil {
			t.Errorf("DecodeSpec(%q) = %+v without an error", b, s)
		}
		if s.StopSignal != "" && unix.SignalNum(s.StopSignal) == 0 {
			t.Errorf("DecodeSpec(%q): stop signal %q", b, s.StopSignal)
		}
	})
}
