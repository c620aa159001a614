package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
)

// noMemoryParent is a cgroup under testParent that offers no memory
// controller in v2: --memory-high (v2 only) cannot be applied in it.
func noMemoryParent(t *testing.T) string {
	t.Helper()
	parent := testParent(t)
	if b, _ := os.ReadFile(parent + "/cgroup.controllers"); strings.Contains(string(b), "memory") {
		parent = filepath.Join(parent, "nomemory")
		if err := os.Mkdir(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(parent) })
	}
	return parent
}

// checkNotRun fails t unless r is the not_run receipt of a refusal for
// reason.
func checkNotRun(t *testing.T, where string, r *receipt.Receipt, reason string) {
	t.Helper()
	if r.Outcome != receipt.OutcomeNotRun || r.Refusal == nil || r.Refusal.Reason != reason || r.Refusal.Detail == "" || r.Exit.Code != 125 || r.Main != nil {
		t.Errorf("%s: outcome %q, refusal %+v, exit %+v, main %v; want not_run for %s, exit 125, no main", where, r.Outcome, r.Refusal, r.Exit, r.Main, reason)
	}
}

// TestRefusalsLeaveReceipts: every refusal before the command starts
// exits 125 with its reason on stderr and leaves a not_run receipt, in
// --receipt FILE (run) and in the state dir; nothing is started and
// nothing is left: no leaf, no record.
func TestRefusalsLeaveReceipts(t *testing.T) {
	cgroupParent(t)
	gone := exec.Command("true")
	startCmd(gone)
	gone.Wait()
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "f"), make([]byte, 2<<20), 0o644)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(t.TempDir(), link)
	tests := []struct {
		name   string
		cmd    string // run or start
		args   []string
		reason string
		noMem  bool // in a parent without a v2 memory controller
	}{
		{"run require-free", "run", []string{"--require-free", "/=1000000T"}, "require-free", false},
		{"run require-free missing path", "run", []string{"--require-free", "/nonexistent-tether=1K"}, "require-free", false},
		{"run strict limit", "run", []string{"--memory-high", "32M"}, "limits", true},
		{"run storage over", "run", []string{"--storage-max", full + "=1M"}, "storage", false},
		{"run storage missing path", "run", []string{"--storage-max", "/nonexistent-tether=1M"}, "storage", false},
		{"run storage symlink", "run", []string{"--storage-max", link + "=1M"}, "storage", false},
		{"start require-free", "start", []string{"--name", "s", "--require-free", "/=1000000T"}, "require-free", false},
		{"start strict limit", "start", []string{"--name", "s", "--memory-high", "32M"}, "limits", true},
		{"start storage over", "start", []string{"--name", "s", "--storage-max", full + "=1M"}, "storage", false},
		{"start owner gone", "start", []string{"--name", "s", "--owner", strconv.Itoa(gone.Process.Pid)}, "owner-gone", false},
		{"start pool full", "start", []string{"--name", "s", "--pool", "p", "--max", "1"}, "pool-full", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xdg := stateEnv(t)
			parent := testParent(t)
			if tt.noMem {
				parent = noMemoryParent(t)
			}
			if tt.reason == "pool-full" {
				mustStart(t, xdg, nil, "--name", "member", "--pool", "p", "--max", "1", "--owner", "none", "--", "sleep", "1000")
				defer func() {
					tetherIn(t, xdg, nil, "stop", "member")
					assertNothingLeft(t, xdg, parent)
				}()
			}
			started := filepath.Join(t.TempDir(), "started")
			rp := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{tt.cmd, "--cgroup-parent", parent}, tt.args...)
			if tt.cmd == "run" {
				args = append(args, "--receipt", rp)
			}
			code, _, stderr := tetherIn(t, xdg, nil, append(args, "--", "touch", started)...)
			if code != 125 || !strings.HasPrefix(stderr, "tether: refused ("+tt.reason+"): ") {
				t.Errorf("tether %s = %d, stderr %q; want 125 and refused (%s)", strings.Join(args, " "), code, stderr, tt.reason)
			}
			if tt.cmd == "run" {
				r, _ := readReceipt(t, rp)
				checkNotRun(t, "--receipt", r, tt.reason)
			}
			kept, _ := filepath.Glob(filepath.Join(xdg, "tether", "receipts", "not-run-*.json"))
			if len(kept) != 1 {
				t.Fatalf("not_run receipts in the state dir: %v, want 1", kept)
			}
			r, _ := readReceipt(t, kept[0])
			checkNotRun(t, kept[0], r, tt.reason)
			if tt.reason == "storage" && strings.Contains(tt.name, "over") && (len(r.Storage) != 1 || r.Storage[0].Before != 2<<20 || !r.Storage[0].Exceeded) {
				t.Errorf("storage of the refusal = %+v; want the census: 2M, exceeded", r.Storage)
			}
			if exists(started) {
				t.Error("the command ran")
			}
			if l := leaves(parent); len(l) > 0 {
				t.Errorf("leaves left: %v", l)
			}
			reg, err := store.Open(filepath.Join(xdg, "tether"))
			if err != nil {
				t.Fatal(err)
			}
			defer reg.Close()
			if rec, err := reg.Read("s"); err == nil {
				t.Errorf("record of the refused session: %+v", rec)
			}
			for _, p := range []string{"logs/s.log", "s/s", "ended/s.json"} {
				if exists(filepath.Join(xdg, "tether", p)) {
					t.Errorf("%s left by the refused start", p)
				}
			}
			if tt.reason != "pool-full" {
				assertNothingLeft(t, xdg, parent)
			}
		})
	}
}

// TestReapPrunesRefusals: tether reap --prune D deletes the not_run
// receipts of refused starts older than D, which no record names, and
// keeps younger ones.
func TestReapPrunesRefusals(t *testing.T) {
	xdg := stateEnv(t)
	for range 2 {
		if code, _, stderr := tetherIn(t, xdg, nil, "run", "--require-free", "/=1000000T", "--", "true"); code != 125 {
			t.Fatalf("refused run = %d, %s; want 125", code, stderr)
		}
	}
	kept, _ := filepath.Glob(filepath.Join(xdg, "tether", "receipts", "not-run-*.json"))
	if len(kept) != 2 {
		t.Fatalf("not_run receipts: %v, want 2", kept)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(kept[0], old, old)
	if code, out, stderr := tetherIn(t, xdg, nil, "reap", "--prune", "1h"); code != 0 {
		t.Fatalf("tether reap --prune 1h = %d, %s%s", code, out, stderr)
	}
	if exists(kept[0]) || !exists(kept[1]) {
		t.Errorf("after reap --prune 1h: old receipt kept %t, young one kept %t; want false, true", exists(kept[0]), exists(kept[1]))
	}
}
