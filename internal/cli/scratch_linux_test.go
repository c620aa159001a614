package cli_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRunScratch: --scratch gives the command a fresh 0700 TMPDIR,
// removed after exit 0 and kept after exit 1, named in the receipt (and
// on stderr when kept).
func TestRunScratch(t *testing.T) {
	for _, tt := range []struct {
		name string
		exit int
	}{{"exit 0", 0}, {"exit 1", 1}} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "tmpdir")
			rp := filepath.Join(t.TempDir(), "r.json")
			script := `echo "$TMPDIR" > ` + out + `; stat -c %a "$TMPDIR" >> ` + out + `; ls -A "$TMPDIR" | wc -l >> ` + out + `; touch "$TMPDIR/x"; exit ` + strconv.Itoa(tt.exit)
			code, _, stderr := tether(t, append([]string{"run", "--scratch", "--receipt", rp, "--"}, sh(script)...)...)
			if code != tt.exit {
				t.Fatalf("tether run --scratch = %d, want %d; stderr %q", code, tt.exit, stderr)
			}
			b, _ := os.ReadFile(out)
			lines := strings.Fields(string(b))
			if len(lines) != 3 || lines[1] != "700" || lines[2] != "0" || !strings.HasPrefix(filepath.Base(lines[0]), "tether-scratch-") || lines[0] == os.TempDir() {
				t.Fatalf("the command saw TMPDIR, its mode, its entries: %q; want a fresh, empty 0700 scratch dir", lines)
			}
			dir := lines[0]
			r, _ := readReceipt(t, rp)
			if r.Scratch == nil || r.Scratch.Path != dir {
				t.Fatalf("receipt scratch = %+v, want path %s", r.Scratch, dir)
			}
			if tt.exit == 0 {
				if exists(dir) || !r.Scratch.Removed || strings.Contains(stderr, dir) {
					t.Errorf("after exit 0: scratch exists %t, receipt %+v, stderr %q; want removed, unnamed", exists(dir), r.Scratch, stderr)
				}
				return
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			if !exists(filepath.Join(dir, "x")) || r.Scratch.Removed || r.Scratch.Kept == "" || !strings.Contains(stderr, "scratch dir kept (the run exited 1): "+dir) {
				t.Errorf("after exit 1: scratch kept %t, receipt %+v, stderr %q; want kept and named", exists(dir), r.Scratch, stderr)
			}
		})
	}
}
