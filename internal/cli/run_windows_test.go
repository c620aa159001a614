package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tether-run/tether/internal/testuser"
	"github.com/tether-run/tether/receipt"
)

// Windows: tether run through the real CLI under Wine (or Windows). The
// command tether runs is this test binary again as a helper; -e turns
// tether's asTetherEnv off for it. Every process carries the test's
// marker in its command line, so that survivors can be found from Linux,
// where every Wine process has PPID 1.

// runOSHelper runs the Windows helpers: "tree" starts a sleeper, waits
// for it, then exits with args[1] (or sleeps with "stay").
func runOSHelper(name string, args []string) (int, bool) {
	switch name {
	case "sleeper":
		os.WriteFile(filepath.Join(args[1], "sleeper"), nil, 0o644)
		time.Sleep(time.Hour)
		return 0, true
	case "say":
		// One line on each stream, then exit 0 or stay.
		fmt.Println("hello from stdout")
		fmt.Fprintln(os.Stderr, "hello from stderr")
		if args[2] == "stay" {
			time.Sleep(time.Hour)
		}
		return 0, true
	case "tree":
		exe, _ := os.Executable()
		c := exec.Command(exe, args[0], args[1])
		c.Env = append(withoutEnv(os.Environ(), helperEnv), helperEnv+"=sleeper")
		if len(args) > 3 && args[3] == "breakaway" {
			// Out of the job if it would let us: it must not.
			c.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_BREAKAWAY_FROM_JOB}
			if err := c.Start(); err == nil {
				fmt.Fprintln(os.Stderr, "tree: the job let a child break away")
				os.WriteFile(filepath.Join(args[1], "brokeaway"), nil, 0o644)
				return 1, true
			}
			c = exec.Command(exe, args[0], args[1])
			c.Env = append(withoutEnv(os.Environ(), helperEnv), helperEnv+"=sleeper")
		}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "tree:", err)
			return 1, true
		}
		for i := 0; i < 3000; i++ {
			if _, err := os.Stat(filepath.Join(args[1], "sleeper")); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if args[2] == "stay" {
			time.Sleep(time.Hour)
		}
		code, _ := strconv.Atoi(args[2])
		return code, true
	}
	return 0, false
}

// treeArgs is `tether run` of the tree helper, marked for t.
func treeArgs(t *testing.T, dir, then string, flags ...string) []string {
	exe, _ := os.Executable()
	args := append([]string{"run"}, flags...)
	return append(args, "-e", asTetherEnv+"=0", "-e", helperEnv+"=tree", "--", exe, wineTag(t), dir, then)
}

// wineTag is t's marker as it appears in the command lines of its
// processes; .ci/wine/test.sh looks for the prefix after the tests.
func wineTag(t *testing.T) string { return "tether-wine-test-cli-" + marker(t) }

// liveMarked lists the processes whose command line holds t's marker, as
// Linux sees them through Wine's Z: drive.
func liveMarked(t *testing.T) []string {
	var out []string
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Logf("/proc not readable: no survivor check")
		return nil
	}
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(wineTag(t))) {
			out = append(out, e.Name())
		}
	}
	return out
}

// checkNoSurvivors waits, under a hang guard, for every marked process to
// be gone.
func checkNoSurvivors(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(runDeadline)
	for {
		live := liveMarked(t)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("survivors (Linux pids): %v", live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readReceipt(t *testing.T, path string) *receipt.Receipt {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r receipt.Receipt
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("receipt: %v\n%s", err, b)
	}
	return &r
}

func TestWindowsRunExitCodeAndReceipt(t *testing.T) {
	dir := testuser.TempDir(t)
	rpath := filepath.Join(dir, "receipt.json")
	code, _, stderr := tether(t, treeArgs(t, dir, "7", "--receipt", rpath)...)
	if code != 7 {
		t.Fatalf("tether run = exit %d, want 7; stderr: %s", code, stderr)
	}
	r := readReceipt(t, rpath)
	if r.Mechanism != receipt.MechanismJobObject || !r.StopConfirmed || r.StragglersTotal < 1 || r.Job == nil || r.Job.TotalProcesses < 2 {
		t.Errorf("receipt: mechanism %q confirmed %v stragglers %d job %+v; want job-object, confirmed, >= 1 straggler, >= 2 processes",
			r.Mechanism, r.StopConfirmed, r.StragglersTotal, r.Job)
	}
	if !strings.Contains(stderr, "straggler it left") && !strings.Contains(stderr, "stragglers it left") {
		t.Errorf("stderr %q does not report the stragglers", stderr)
	}
	// Where the break was refused (Wine), the grace was skipped, and the
	// warning says so rather than that the members outlived it.
	if len(r.Stop.Steps) > 0 && r.Stop.Steps[0].Error != "" && !strings.Contains(stderr, "the polite stop reached no process") {
		t.Errorf("the break was refused (%s), but stderr %q does not say so", r.Stop.Steps[0].Error, stderr)
	}
	checkNoSurvivors(t)
}

func TestWindowsRunTimeout(t *testing.T) {
	dir := testuser.TempDir(t)
	code, _, stderr := tether(t, treeArgs(t, dir, "stay", "--timeout", "2", "--grace", "0")...)
	if code != 124 {
		t.Fatalf("tether run --timeout = exit %d, want 124; stderr: %s", code, stderr)
	}
	checkNoSurvivors(t)
}

// TestWindowsTetherKilled: tether dies while its run holds a tree; the
// job dies with it (KILL_ON_JOB_CLOSE).
func TestWindowsTetherKilled(t *testing.T) {
	dir := testuser.TempDir(t)
	cmd, _, stderr := tetherCmd(t, treeArgs(t, dir, "stay")...)
	if err := startCmd(cmd); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(runDeadline); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "sleeper")); err == nil {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("tether run ended (%v) before the sleeper started: %s", err, stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sleeper never started: %s", stderr)
		}
	}
	if live := liveMarked(t); len(live) < 2 {
		t.Errorf("before the kill: %d marked processes seen, want >= 2 (the check could not see a leak)", len(live))
	}
	cmd.Process.Kill()
	<-exited
	checkNoSurvivors(t)
}

func TestWindowsRefusals(t *testing.T) {
	exe, _ := os.Executable()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"start", "--signal", "INT", "--", exe}, 2, "not supported on Windows"},
		{[]string{"exec", "tether-no-such-session", "--", exe}, 125, "not found"},
		{[]string{"run", "--signal", "INT", "--", exe}, 125, "not supported on Windows"},
		{[]string{"run", "--memory-high", "1G", "--", exe}, 125, "a Windows job has no soft memory limit"},
		{[]string{"run", "--", "tether-no-such-program"}, 127, "not found"},
	} {
		code, _, stderr := tether(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("tether %s = exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
	}
}

// TestWindowsDoctor: tether doctor probes the job mechanism by using it:
// a contained run confirmed, breakaway allowed out of no job and refused
// from inside a tether run's, and the limits a job keeps (none under
// Wine).
func TestWindowsDoctor(t *testing.T) {
	exe, _ := os.Executable()
	type report struct {
		Supported bool `json:"supported"`
		Job       *struct {
			Wine        string `json:"wine"`
			InJob       bool   `json:"in_job"`
			CreateInJob struct {
				Available bool `json:"available"`
			} `json:"create_in_job"`
			Breakaway struct {
				Available, Probed bool
			} `json:"breakaway"`
		} `json:"job"`
		Limits []struct {
			Controller, Where, Why string
		} `json:"limits"`
		Mechanism struct{ Default string } `json:"mechanism"`
	}
	decode := func(args ...string) report {
		code, out, stderr := tether(t, args...)
		var r report
		if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Job == nil {
			t.Fatalf("tether %s = %d (%v): %s %s", strings.Join(args, " "), code, err, out, stderr)
		}
		return r
	}
	r := decode("doctor", "--json")
	if !r.Supported || r.Job.InJob || !r.Job.CreateInJob.Available || !r.Job.Breakaway.Available || r.Mechanism.Default != "job-object" || len(r.Limits) != 3 {
		t.Errorf("doctor: %+v %+v", r, *r.Job)
	}
	for _, l := range r.Limits {
		if r.Job.Wine != "" && (l.Where != "unavailable" || l.Why == "") {
			t.Errorf("under Wine the %s limit is %s (%s), want unavailable with the reason", l.Controller, l.Where, l.Why)
		}
	}
	inner := decode("run", "-q", "-e", asTetherEnv+"=1", "--", exe, "doctor", "--json")
	if !inner.Job.InJob || inner.Job.Breakaway.Available || !inner.Job.Breakaway.Probed || !inner.Job.CreateInJob.Available {
		t.Errorf("doctor inside tether run: %+v; want in a job, breakaway refused, nested runs contained", *inner.Job)
	}
}
