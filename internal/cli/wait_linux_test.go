package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/tether-run/tether/session"
)

// TestWaitJSON: wait --json prints the ended session's status and exits
// with its code.
func TestWaitJSON(t *testing.T) {
	xdg := stateEnv(t)
	name := mustStart(t, xdg, nil, "--owner", "none", "--", "sh", "-c", "exit 3")
	code, out, stderr := tetherIn(t, xdg, nil, "wait", "--json", name)
	var s session.Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("tether wait --json = %q (%v); stderr %s", out, err, stderr)
	}
	if code != 3 || s.Name != name || s.State != "stopped" || s.Exit == nil || s.Exit.Code != 3 || s.Receipt == "" {
		t.Errorf("tether wait --json = %d, %s; want 3 and the stopped session with exit 3 and a receipt", code, out)
	}
	if p := nullPaths(t, []byte(out)); len(p) != 0 {
		t.Errorf("tether wait --json has null at %v", p)
	}
}
