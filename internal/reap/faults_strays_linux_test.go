package reap_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/supervisor"
	"github.com/tether-run/tether/receipt"
)

// TestFaultStrayLogs: the log a session's supervisor opened beside its
// client's claim, left when both were killed before the name was claimed
// (no record names its run, and it holds no output), is removed by
// `tether reap` once older than reap.StaleAge, and reported before. The
// logs of runs on record (ended, live) and an unnamed log that holds
// output are left alone, unlisted.
func TestFaultStrayLogs(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	// Runs on record, whose logs hold no output either: an ended one
	// and a live one. Their logs stay.
	for _, name := range []string{"ended", "live"} {
		if r := f.tether(nil, "start", "-q", "--name", name, "--owner", "none", "--", "sleep", "1000"); r.code != 0 {
			t.Fatalf("tether start = %s: %s", r, r.stderr)
		}
	}
	t.Cleanup(func() { f.tether(nil, "stop", "live") })
	if r := f.tether(nil, "stop", "ended"); r.code != 0 {
		t.Fatalf("tether stop = %s: %s", r, r.stderr)
	}
	logs := filepath.Join(f.state, "logs")
	named, _ := filepath.Glob(filepath.Join(logs, "[el]*@*.log"))
	if len(named) != 2 {
		t.Fatalf("logs of the sessions ended and live: %v", named)
	}

	old, young := strayLog(t, f, "old"), strayLog(t, f, "young")
	withOutput := filepath.Join(logs, "out@"+receipt.NewRunID()+".log")
	if err := os.WriteFile(withOutput, []byte("2026-12-01T04:00:00.123456789Z # tether-log 1 seq=0\n2026-12-01T04:00:00.123456789Z O hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-2 * reap.StaleAge)
	for _, p := range append([]string{old, withOutput}, named...) {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}

	f.checkStale("log", []staleWant{
		{old, removed},
		{young, reported},
		{named[0], untouched},
		{named[1], untouched},
		{withOutput, untouched},
	})
}

// strayLog starts tether's supervisor for session name as a client does,
// hands it the spec but never the go, and SIGKILLs it once it has opened
// the run's log, as if client and supervisor were both killed before the
// claim. It returns the log's path.
func strayLog(t *testing.T, f *faultEnv, name string) string {
	t.Helper()
	spec := sessionctl.Spec{Name: name, RunID: receipt.NewRunID(), Argv: []string{"true"}, Owner: "none",
		Until: sessionctl.UntilMainExit, LogMax: 1 << 20, LogKeep: 2}
	b, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(context.Background(), faultDeadline)
	defer cancel()
	cmd := f.command(ctx, nil, supervisor.Args(f.bin, f.state, name)[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	cmd.ExtraFiles = []*os.File{wr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	// Killed before its hand-off closes: a closed one makes it remove
	// the log itself.
	defer in.Close()
	defer cmd.Wait()
	defer cmd.Process.Kill()
	supervisor.SendSpec(in, b)
	log := filepath.Join(f.state, "logs", name+"@"+spec.RunID+".log")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Lstat(log); err == nil {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("the supervisor made no log %s in 10 s", log)
		}
	}
}
