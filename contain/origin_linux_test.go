package contain

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/version"
)

// TestRunOrigin (issue 11): the receipt names the run (a fresh id, also in
// the command's environment as TETHER_RUN_ID, replacing an inherited one),
// the tether build and the boot the run happened in.
func TestRunOrigin(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			ids := map[string]bool{}
			for range 2 {
				c := Command("sh", "-c", `printf %s "$TETHER_RUN_ID"`)
				c.Mechanism = mech
				c.Env = append(os.Environ(), RunIDEnv+"=inherited")
				var out bytes.Buffer
				c.Stdout = &out
				if err := c.Run(); err != nil {
					t.Fatalf("Run() = %v", err)
				}
				r := c.Receipt()
				if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(r.RunID) {
					t.Errorf("run_id = %q, want 32 lowercase hex digits", r.RunID)
				}
				if out.String() != r.RunID || c.RunID != r.RunID {
					t.Errorf("the command's $%s = %q, Cmd.RunID = %q, want the receipt's run_id %q", RunIDEnv, out.String(), c.RunID, r.RunID)
				}
				ids[r.RunID] = true
				checkOrigin(t, r)
			}
			if len(ids) != 2 {
				t.Errorf("two runs had run ids %v, want two different ones", ids)
			}
		})
	}
}

// TestRunIDGiven: a caller that recorded the run before Start keeps its id.
func TestRunIDGiven(t *testing.T) {
	id := receipt.NewRunID()
	c := Command("sh", "-c", `printf %s "$TETHER_RUN_ID"`)
	c.RunID = id
	var out bytes.Buffer
	c.Stdout = &out
	if err := c.Run(); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if r := c.Receipt(); r.RunID != id || out.String() != id {
		t.Errorf("run_id = %q, $%s = %q, want the id given, %q", r.RunID, RunIDEnv, out.String(), id)
	}
}

func checkOrigin(t *testing.T, r *receipt.Receipt) {
	t.Helper()
	boot, err := identity.BootID()
	if err != nil {
		t.Fatal(err)
	}
	if r.Host.BootID != boot {
		t.Errorf("host.boot_id = %q, want %q", r.Host.BootID, boot)
	}
	if !strings.Contains(r.Main.Token, ":"+boot+":") {
		t.Errorf("main token %q does not carry host.boot_id %q", r.Main.Token, boot)
	}
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	if r.Host.Hostname != host || r.Host.Kernel != strings.TrimSpace(string(kernel)) {
		t.Errorf("host = %+v, want hostname %q, kernel %q", r.Host, host, kernel)
	}
	// A go test binary records no commit; whatever it records, the
	// receipt must say the same and nothing more.
	v := version.Get()
	want := receipt.Tether{Version: v.Version, Revision: v.Revision, Modified: v.Modified}
	got := r.Tether
	got.Executable = nil // TestReceiptExecutable's
	if got != want || r.Tether.Version == "" {
		t.Errorf("tether = %+v, want %+v from the build info", r.Tether, want)
	}
}
