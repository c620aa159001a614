package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/receipt"
)

// writePast is a command that writes 6.25M under dir, past a 1M ceiling,
// and then waits to be stopped.
func writePast(dir string) []string {
	return sh("dd if=/dev/zero of=" + dir + "/f bs=64k count=100 2>/dev/null; exec sleep 1000")
}

// checkCrossed fails t unless r records the census of a 1M ceiling on
// dir that a run crossed by writing 6.25M.
func checkCrossed(t *testing.T, r *receipt.Receipt, dir string) {
	t.Helper()
	if r.Stop.Reason != "storage" || len(r.Storage) != 1 {
		t.Fatalf("receipt stop.reason %q, storage %+v; want storage and one census", r.Stop.Reason, r.Storage)
	}
	s := r.Storage[0]
	if s.Path != dir || s.LimitBytes != 1<<20 || s.Before != 0 || s.Peak != 6553600 || s.After != 6553600 || !s.Exceeded || s.Censuses < 2 || s.Error != "" {
		t.Errorf("receipt storage = %+v; want %s: limit 1M, before 0, peak and after 6553600, exceeded", s, dir)
	}
	if s.BeforeAt.IsZero() || s.PeakAt.Before(s.BeforeAt) || s.AfterAt.Before(s.PeakAt) {
		t.Errorf("receipt storage times: before %v, peak %v, after %v; want in that order", s.BeforeAt, s.PeakAt, s.AfterAt)
	}
}

// TestRunStorageCeiling: a run that writes past --storage-max DIR=1M is
// stopped by the stop protocol with reason storage and exits 153
// (128+SIGXFSZ), the census in its receipt; nothing is left.
func TestRunStorageCeiling(t *testing.T) {
	parent := testParent(t)
	dir := t.TempDir()
	rp := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := tether(t, append([]string{"run", "--cgroup-parent", parent, "--grace", "2s", "--storage-max", dir + "=1M", "--receipt", rp, "--"}, writePast(dir)...)...)
	if code != 153 || !strings.Contains(stderr, "stopped the run: "+dir+" held 6.25M (--storage-max 1M)") {
		t.Errorf("run past its storage ceiling = %d, stderr %q; want 153 and the census", code, stderr)
	}
	r, _ := readReceipt(t, rp)
	checkCrossed(t, r, dir)
	if r.Outcome != receipt.OutcomeRan || r.Exit.Code != 153 || !r.StopConfirmed {
		t.Errorf("receipt outcome %q, exit %+v, stop_confirmed %t; want ran, 153, confirmed", r.Outcome, r.Exit, r.StopConfirmed)
	}
	assertNoSurvivors(t)
	if l := leaves(parent); len(l) > 0 {
		t.Errorf("leaves left: %v", l)
	}
}

// TestRunStorageCensusFails: a census that cannot complete during the
// run (the command removed the directory) stops the group, saying why.
func TestRunStorageCensusFails(t *testing.T) {
	parent := testParent(t)
	dir := filepath.Join(t.TempDir(), "d")
	os.Mkdir(dir, 0o755)
	rp := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := tether(t, append([]string{"run", "--cgroup-parent", parent, "--storage-max", dir + "=1M", "--receipt", rp, "--"}, sh("rmdir "+dir+"; exec sleep 1000")...)...)
	if code != 153 || !strings.Contains(stderr, "the storage census of "+dir+" could not complete") {
		t.Errorf("run whose census fails = %d, stderr %q; want 153 and why", code, stderr)
	}
	r, _ := readReceipt(t, rp)
	if r.Stop.Reason != "storage" || len(r.Storage) != 1 || !strings.Contains(r.Storage[0].Error, "no such file") || r.Storage[0].After != -1 {
		t.Errorf("receipt stop.reason %q, storage %+v; want storage, the census's error, after -1", r.Stop.Reason, r.Storage)
	}
	assertNoSurvivors(t)
	if l := leaves(parent); len(l) > 0 {
		t.Errorf("leaves left: %v", l)
	}
}

// TestSessionStorageCeiling: a session that writes past its
// --storage-max is stopped by its supervisor with reason storage.
func TestSessionStorageCeiling(t *testing.T) {
	cgroupParent(t)
	xdg := stateEnv(t)
	dir := t.TempDir()
	name := mustStart(t, xdg, nil, append([]string{"--name", "full", "--owner", "none", "--grace", "2s", "--storage-max", dir + "=1M", "--"}, writePast(dir)...)...)
	if code, _, stderr := tetherIn(t, xdg, nil, "wait", name); code != 153 {
		t.Errorf("tether wait %s = %d, %s; want 153", name, code, stderr)
	}
	s := statusOf(t, xdg, name)
	if s.StopReason != "storage" || s.Exit == nil || s.Exit.Code != 153 {
		t.Errorf("session %s: stop reason %q, exit %+v; want storage, 153", name, s.StopReason, s.Exit)
	}
	r, _ := readReceipt(t, s.Receipt) // receipts/NAME@RUNID.json
	checkCrossed(t, r, dir)
	awaitSupervisorExit(t, xdg, name)
	assertNoSurvivors(t)
}
