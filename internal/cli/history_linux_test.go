package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/session"
)

// runOnce starts session name with a command that prints line and
// sleeps, then stops it, and returns the run's status as ls -a shows it.
func runOnce(t *testing.T, xdg string, env []string, name, line string) {
	t.Helper()
	mustStart(t, xdg, env, "-q", "--name", name, "--", "sh", "-c", "echo "+line+"; exec sleep 1000")
	awaitLog(t, xdg, name, line)
	if code, _, stderr := tetherIn(t, xdg, env, "stop", name); code != 0 {
		t.Fatalf("tether stop %s = %d: %s", name, code, stderr)
	}
}

// awaitLog waits until the newest run of name has logged line.
func awaitLog(t *testing.T, xdg, name, line string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, out, _ := tetherIn(t, xdg, nil, "logs", name); strings.Contains(out, line) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s never logged %q", name, line)
		}
	}
}

// lsAll is tether ls -a --json.
func lsAll(t *testing.T, xdg string) []session.Status {
	t.Helper()
	code, out, stderr := tetherIn(t, xdg, nil, "ls", "-a", "--json")
	if code != 0 {
		t.Fatalf("tether ls -a --json = %d: %s", code, stderr)
	}
	var doc struct {
		Sessions []session.Status `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("ls -a --json: %v\n%s", err, out)
	}
	return doc.Sessions
}

// runsOf returns the runs of name ls -a lists, newest first.
func runsOf(t *testing.T, xdg, name string) []session.Status {
	t.Helper()
	var out []session.Status
	for _, s := range lsAll(t, xdg) {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// TestHistoryKeepsEachRun: a name started three times, each run stopped
// before the next, keeps three runs (issue 27): ls -a lists each with its
// run id, logs --run prints each run's own output (a prefix of the id
// will do), each has its own receipt, and logs without --run is the
// newest run's. Before, each start erased the previous run's log and
// receipt.
func TestHistoryKeepsEachRun(t *testing.T) {
	xdg := stateEnv(t)
	for _, line := range []string{"first-run", "second-run", "third-run"} {
		runOnce(t, xdg, nil, "web", line)
	}
	runs := runsOf(t, xdg, "web")
	if len(runs) != 3 {
		t.Fatalf("ls -a lists %d runs of web, want 3: %+v", len(runs), runs)
	}
	want := []string{"third-run", "second-run", "first-run"} // newest first
	seen := map[string]bool{}
	for i, r := range runs {
		if r.RunID == "" || seen[r.RunID] || r.State != "stopped" {
			t.Errorf("run %d: id %q state %s; want a distinct run id, stopped", i, r.RunID, r.State)
		}
		seen[r.RunID] = true
		code, out, stderr := tetherIn(t, xdg, nil, "logs", "--run", r.RunID[:8], "web")
		if code != 0 || strings.TrimSpace(out) != want[i] {
			t.Errorf("tether logs --run %s web = %d, %q (%s); want %q", r.RunID[:8], code, out, stderr, want[i])
		}
		rc, _ := readReceipt(t, r.Receipt)
		if rc.RunID != r.RunID || !rc.StopConfirmed || rc.Name != "web" {
			t.Errorf("receipt %s: run %q confirmed %t name %q; want run %s, confirmed, web", r.Receipt, rc.RunID, rc.StopConfirmed, rc.Name, r.RunID)
		}
	}
	if _, out, _ := tetherIn(t, xdg, nil, "logs", "web"); strings.TrimSpace(out) != "third-run" {
		t.Errorf("tether logs web = %q, want the newest run's third-run", out)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "logs", "--run", "nosuchrun", "web"); code != 1 || !strings.Contains(stderr, `no run "nosuchrun"`) {
		t.Errorf("tether logs --run nosuchrun web = %d, %q; want 1 and no such run", code, stderr)
	}
	// --run completes the name's run ids, newest first.
	_, comp, _ := tetherIn(t, xdg, nil, "__complete", "logs", "web", "--run", "")
	var ids []string
	for _, l := range strings.Split(comp, "\n") {
		if id, _, ok := strings.Cut(l, "\t"); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) != 3 || ids[0] != runs[0].RunID || ids[2] != runs[2].RunID {
		t.Errorf("completion of logs web --run = %q, want the 3 run ids, newest first", comp)
	}
	// The table shows each run's id too.
	_, out, _ := tetherIn(t, xdg, nil, "ls", "-a")
	for _, r := range runs {
		if !strings.Contains(out, r.RunID[:12]) {
			t.Errorf("tether ls -a lacks run %s:\n%s", r.RunID[:12], out)
		}
	}
	// A fourth run holds the name's runtime dir: the earlier runs, whose
	// records name the same path, do not have it (ls -a, inspect --run).
	mustStart(t, xdg, nil, "--name", "web", "--", "sleep", "1000")
	for _, r := range runsOf(t, xdg, "web") {
		if want := r.State == "running"; r.RuntimeDirExists != want {
			t.Errorf("ls -a: run %s (%s): runtime_dir_exists %t, want %t", r.RunID[:8], r.State, r.RuntimeDirExists, want)
		}
	}
	code, out, stderr := tetherIn(t, xdg, nil, "inspect", "--run", runs[0].RunID, "web")
	var in struct {
		RuntimeDirExists *bool `json:"runtime_dir_exists"`
	}
	if err := json.Unmarshal([]byte(out), &in); code != 0 || err != nil || in.RuntimeDirExists == nil || *in.RuntimeDirExists {
		t.Errorf("inspect --run %s web (an earlier run) = %d, runtime_dir_exists %v (%v, %s); want false", runs[0].RunID[:8], code, in.RuntimeDirExists, err, stderr)
	}
	tetherIn(t, xdg, nil, "stop", "web")
	assertNoSurvivors(t)
}

// runFiles lists the files of the state dir that belong to name's runs.
func runFiles(xdg, name string) []string {
	var out []string
	for _, d := range []string{"records", "ended", "logs", "receipts", "configs"} {
		ents, _ := os.ReadDir(filepath.Join(xdg, "tether", d))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), name+".") || strings.HasPrefix(e.Name(), name+"@") {
				out = append(out, d+"/"+e.Name())
			}
		}
	}
	return out
}

// TestRm: tether rm removes an ended session's runs (record, log, receipt,
// configuration), one run with --run; it refuses a running session and
// leaves it running; with -f it stops it first and leaves no process, no
// cgroup and no file of it; a name without a session is an error.
func TestRm(t *testing.T) {
	xdg := stateEnv(t)
	runOnce(t, xdg, nil, "done", "one")
	runOnce(t, xdg, nil, "done", "two")
	runs := runsOf(t, xdg, "done")
	if len(runs) != 2 {
		t.Fatalf("runs of done = %d, want 2", len(runs))
	}
	if code, out, stderr := tetherIn(t, xdg, nil, "rm", "--run", runs[1].RunID, "done"); code != 0 || !strings.Contains(out, "removed done run "+runs[1].RunID[:12]) {
		t.Fatalf("tether rm --run = %d, %q %q", code, out, stderr)
	}
	if left := runsOf(t, xdg, "done"); len(left) != 1 || left[0].RunID != runs[0].RunID {
		t.Errorf("after rm --run of the older run: %+v, want the newer run only", left)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "rm", "done"); code != 0 {
		t.Fatalf("tether rm done = %d: %s", code, stderr)
	}
	if f := runFiles(xdg, "done"); len(f) != 0 {
		t.Errorf("files of done after rm: %v", f)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "status", "done"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("tether status done after rm = %d, %q; want 1, not found", code, stderr)
	}

	mustStart(t, xdg, nil, "-q", "--name", "live", "--", "sh", "-c", "setsid sleep 1000 & exec sleep 1000")
	awaitProcs(t, xdg, "live", 2)
	code, out, stderr := tetherIn(t, xdg, nil, "rm", "live")
	if code != 1 || !strings.Contains(stderr, `session "live" is running`) || out != "" {
		t.Errorf("tether rm of a running session = %d, %q %q; want 1, refused", code, out, stderr)
	}
	s := statusOf(t, xdg, "live")
	if s.State != "running" || s.Procs < 2 || len(runFiles(xdg, "live")) == 0 {
		t.Fatalf("after a refused rm: state %s procs %d files %v; want it untouched", s.State, s.Procs, runFiles(xdg, "live"))
	}
	code, out, stderr = tetherIn(t, xdg, nil, "rm", "-f", "live")
	if code != 0 || !strings.Contains(out, "live\tstopped (request)") || !strings.Contains(out, "removed live run "+s.RunID[:12]) {
		t.Errorf("tether rm -f live = %d, %q %q; want its stop line and its removal", code, out, stderr)
	}
	assertNoSurvivors(t)
	if s.Cgroup != "" && exists(s.Cgroup) {
		t.Errorf("cgroup %s still exists after rm -f", s.Cgroup)
	}
	if f := runFiles(xdg, "live"); len(f) != 0 || exists(s.RuntimeDir) {
		t.Errorf("after rm -f: files %v, runtime dir there %t; want nothing", f, exists(s.RuntimeDir))
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"rm", "nosuch"}, 1, `session "nosuch": not found`},
		{[]string{"rm", "a/b"}, 2, "bad name"},
		{[]string{"rm"}, 2, "want session names, got 0 arguments"},
		{[]string{"rm", "--run", "x", "a", "b"}, 2, "--run takes one session name"},
	} {
		if code, _, stderr := tetherIn(t, xdg, nil, tt.args...); code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("tether %q = %d, %q; want %d, %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
}

// TestPruneOlder: prune --older removes the ended runs that ended longer
// ago than it says, and never a live session; --dry-run and --json say
// what it would remove and remove nothing.
func TestPruneOlder(t *testing.T) {
	xdg := stateEnv(t)
	runOnce(t, xdg, nil, "old", "a")
	runOnce(t, xdg, nil, "old", "b")
	mustStart(t, xdg, nil, "-q", "--name", "alive", "--", "sleep", "1000")
	if code, out, _ := tetherIn(t, xdg, nil, "prune", "--older", "1h"); code != 0 || out != "" {
		t.Errorf("prune --older 1h = %d, %q; want nothing removed", code, out)
	}
	time.Sleep(50 * time.Millisecond)
	code, out, stderr := tetherIn(t, xdg, nil, "prune", "--older", "0.01", "--dry-run", "--json")
	var doc struct {
		DryRun  bool `json:"dry_run"`
		Removed []struct {
			Name    string    `json:"name"`
			RunID   string    `json:"run_id"`
			EndedAt time.Time `json:"ended_at"`
			Files   []string  `json:"files"`
		} `json:"removed"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || !doc.DryRun || len(doc.Removed) != 2 {
		t.Fatalf("prune --dry-run --json = %d, %s (%v) %s; want the 2 runs of old", code, out, err, stderr)
	}
	for _, r := range doc.Removed {
		if r.Name != "old" || len(r.Files) < 3 || r.EndedAt.IsZero() {
			t.Errorf("dry run lists %+v; want a run of old with its files", r)
		}
	}
	if n := len(runsOf(t, xdg, "old")); n != 2 {
		t.Errorf("runs of old after a dry run = %d, want 2", n)
	}
	code, out, _ = tetherIn(t, xdg, nil, "prune", "--older", "0.01")
	if code != 0 || strings.Count(out, "removed old run ") != 2 {
		t.Errorf("prune --older = %d, %q; want the 2 runs of old removed", code, out)
	}
	if f := runFiles(xdg, "old"); len(f) != 0 {
		t.Errorf("files of old after prune: %v", f)
	}
	if s := statusOf(t, xdg, "alive"); s.State != "running" {
		t.Errorf("live session after prune: %s", s.State)
	}
	// tether reap --prune takes the earlier runs too, not only the newest.
	runOnce(t, xdg, nil, "reaped", "a")
	runOnce(t, xdg, nil, "reaped", "b")
	time.Sleep(50 * time.Millisecond)
	if code, out, stderr := tetherIn(t, xdg, nil, "reap", "--prune", "0.01"); code != 0 || len(runFiles(xdg, "reaped")) != 0 {
		t.Errorf("reap --prune = %d, %s%s; files of reaped left: %v", code, out, stderr, runFiles(xdg, "reaped"))
	}
	tetherIn(t, xdg, nil, "stop", "alive")
	assertNoSurvivors(t)
}

// TestRetentionBound: with a short bound (TETHER_RETAIN=2,1h,0), a
// session's end removes the oldest ended runs past it, of every name,
// with their files: the state stays bounded without anyone asking.
func TestRetentionBound(t *testing.T) {
	xdg := stateEnv(t)
	env := []string{"TETHER_RETAIN=2,1h,0"}
	runOnce(t, xdg, env, "r1", "a")
	runOnce(t, xdg, env, "r2", "b")
	runOnce(t, xdg, env, "r2", "c")
	runOnce(t, xdg, env, "r3", "d")
	var got []string
	for _, s := range lsAll(t, xdg) {
		got = append(got, s.Name)
	}
	if strings.Join(got, " ") != "r2 r3" {
		t.Errorf("ended runs kept = %v, want the newest two: [r2 r3]", got)
	}
	if f := append(runFiles(xdg, "r1"), runFiles(xdg, "r2")...); len(f) != 4 {
		t.Errorf("files of r1 and r2 = %v; want the last run of r2's record, log, receipt, config", f)
	}
	// tether prune applies the same bound; the default keeps them.
	if code, out, _ := tetherIn(t, xdg, nil, "prune", "--dry-run"); code != 0 || out != "" {
		t.Errorf("prune --dry-run under the default bound = %d, %q; want nothing", code, out)
	}
	if code, out, _ := tetherIn(t, xdg, []string{"TETHER_RETAIN=1,0"}, "prune"); code != 0 || !strings.Contains(out, "removed r2 run") {
		t.Errorf("TETHER_RETAIN=1,0 prune = %d, %q; want r2's run removed", code, out)
	}
	if code, _, stderr := tetherIn(t, xdg, []string{"TETHER_RETAIN=lots"}, "prune"); code != 2 || !strings.Contains(stderr, "TETHER_RETAIN") {
		t.Errorf("TETHER_RETAIN=lots prune = %d, %q; want 2 naming it", code, stderr)
	}
	assertNoSurvivors(t)
}

// TestStopAllPastTheBound: a stop --all of more sessions than the
// retention keeps reports every one's receipt: each supervisor prunes as
// it ends, and a run that just ended is kept for its stopper to read (a
// stop of 50 sessions lost some of theirs to each other's prune).
func TestStopAllPastTheBound(t *testing.T) {
	xdg := stateEnv(t)
	env := []string{"TETHER_RETAIN=2,1h"}
	const n = 8
	for i := range n {
		mustStart(t, xdg, env, "-q", "--name", fmt.Sprintf("b%d", i), "--owner", "none", "--", "sleep", "1000")
	}
	code, out, stderr := tetherIn(t, xdg, env, "stop", "--all", "--grace", "0", "--json")
	var doc struct {
		Receipts []struct {
			Name string `json:"name"`
		} `json:"receipts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Receipts) != n {
		t.Errorf("stop --all of %d past a bound of 2 = %d, %d receipts (%v): %s", n, code, len(doc.Receipts), err, stderr)
	}
	if left := lsAll(t, xdg); len(left) != n {
		t.Errorf("ended runs kept in the minute after = %d, want all %d", len(left), n)
	}
	assertNoSurvivors(t)
}

// TestInspect: tether inspect prints one JSON document with the record,
// the configuration the session was started with and, once it ended, its
// receipt; --run shows an earlier run's, times are RFC 3339 with a zone.
func TestInspect(t *testing.T) {
	xdg := stateEnv(t)
	mustStart(t, xdg, []string{"INSPECT_ME=1"}, "-q", "--name", "insp", "--ttl", "1h", "--signal", "INT", "--", "sleep", "1000")
	type doc struct {
		Name      string `json:"name"`
		RunID     string `json:"run_id"`
		State     string `json:"state"`
		CreatedAt string `json:"created_at"`
		Config    *struct {
			Argv       []string `json:"argv"`
			Env        []string `json:"env"`
			TTLMS      int64    `json:"ttl_ms"`
			StopSignal string   `json:"stop_signal"`
			LogKeep    int      `json:"log_keep"`
		} `json:"config"`
		Receipt *struct {
			RunID         string `json:"run_id"`
			Name          string `json:"name"`
			StopConfirmed bool   `json:"stop_confirmed"`
		} `json:"receipt"`
	}
	inspect := func(args ...string) doc {
		t.Helper()
		code, out, stderr := tetherIn(t, xdg, nil, append([]string{"inspect"}, args...)...)
		var d doc
		if err := json.Unmarshal([]byte(out), &d); code != 0 || err != nil {
			t.Fatalf("tether inspect %v = %d, %v: %s%s", args, code, err, out, stderr)
		}
		if _, err := time.Parse(time.RFC3339Nano, d.CreatedAt); err != nil {
			t.Errorf("created_at %q: %v", d.CreatedAt, err)
		}
		return d
	}
	d := inspect("insp")
	if d.Name != "insp" || d.RunID == "" || d.State != "running" || d.Config == nil || d.Receipt != nil {
		t.Fatalf("inspect of a running session = %+v", d)
	}
	if strings.Join(d.Config.Argv, " ") != "sleep 1000" || d.Config.TTLMS != 3600000 || d.Config.StopSignal != "SIGINT" || d.Config.LogKeep == 0 || !contains(d.Config.Env, "INSPECT_ME=1") {
		t.Errorf("config = %+v", d.Config)
	}
	first := d.RunID
	tetherIn(t, xdg, nil, "stop", "insp")
	d = inspect("insp")
	if d.Config == nil || d.Config.TTLMS != 3600000 || d.Receipt == nil || d.Receipt.RunID != first || d.Receipt.Name != "insp" || !d.Receipt.StopConfirmed {
		t.Errorf("inspect of the ended session: config %+v receipt %+v; want both, the receipt of run %s", d.Config, d.Receipt, first)
	}
	mustStart(t, xdg, nil, "-q", "--name", "insp", "--", "sleep", "1000")
	if d = inspect("insp"); d.RunID == first || d.Receipt != nil || d.Config == nil || d.Config.TTLMS != 0 {
		t.Errorf("inspect after a new run = run %s receipt %+v config %+v; want the new run's", d.RunID, d.Receipt, d.Config)
	}
	if d = inspect("--run", first, "insp"); d.RunID != first || d.Receipt == nil || d.Receipt.RunID != first || d.Config == nil || d.Config.TTLMS != 3600000 {
		t.Errorf("inspect --run %s = run %s receipt %+v config %+v; want the first run's", first, d.RunID, d.Receipt, d.Config)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "inspect", "nosuch"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("inspect nosuch = %d, %q", code, stderr)
	}
	tetherIn(t, xdg, nil, "stop", "insp")
	assertNoSurvivors(t)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
