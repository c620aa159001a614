package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// closedPipe returns the write end of a pipe whose read end is already
// closed: every write to it fails with EPIPE and raises SIGPIPE, as a
// write to `| head -1` does once head has exited.
func closedPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// runRecords lists the run records left in the registry under xdg.
func runRecords(xdg string) []string {
	recs, _ := filepath.Glob(filepath.Join(xdg, "tether", "records", "run-*.json"))
	return recs
}

// TestRunClosedOutput is the broken-pipe class of the fault suite (issue
// 9, bug 1): with stdout or stderr a pipe nobody reads, tether's own
// writes fail, and it still stops everything, writes its receipt and
// deletes its run record; the command keeps the default SIGPIPE action.
func TestRunClosedOutput(t *testing.T) {
	cgroupParent(t)
	cases := []struct {
		name    string
		closed  string // "stdout" or "stderr"
		receipt string // "-" for stdout, else written to a file
		args    []string
		argv    []string
		code    int
		signal  string // the main process's death, if any
	}{
		{
			// The straggler is reported on stderr after the stop: the
			// write used to kill tether before it wrote the receipt. (A
			// warning during the run, such as "limits: ...", killed it
			// with the leaf populated and the record "running"; the same
			// write, earlier.)
			name: "stderr-warnings", closed: "stderr",
			argv: sh(daemonScript), code: 0,
		},
		{
			// The receipt cannot be written to stdout: a clear failure
			// (125), not a death by SIGPIPE after the record was deleted.
			name: "stdout-receipt", closed: "stdout", receipt: "-",
			argv: sh(daemonScript), code: 125,
		},
		{
			// tether survives SIGPIPE; the command must not: yes(1) dies of
			// it, and would print an error and exit 1 if it had inherited
			// an ignored SIGPIPE.
			name: "command-dies-of-sigpipe", closed: "stdout",
			argv: []string{"yes"}, code: 128 + 13, signal: "SIGPIPE",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			xdg := stateEnv(t)
			rcpt := tc.receipt
			if rcpt == "" {
				rcpt = filepath.Join(t.TempDir(), "receipt.json")
			}
			args := append(append(append([]string{"run", "--receipt", rcpt}, tc.args...), "--"), tc.argv...)
			cmd, _, stderr := tetherCmd(t, args...)
			cmd.Env = append(withoutEnv(cmd.Env, "XDG_RUNTIME_DIR"), "XDG_RUNTIME_DIR="+xdg)
			if tc.closed == "stdout" {
				cmd.Stdout = closedPipe(t)
			} else {
				cmd.Stderr = closedPipe(t)
			}
			code := wait(t, cmd) // fails the test if tether died of a signal
			if code != tc.code {
				t.Errorf("tether %s with %s closed = exit %d, want %d; stderr: %s", strings.Join(args, " "), tc.closed, code, tc.code, stderr)
			}
			if recs := runRecords(xdg); len(recs) != 0 {
				t.Errorf("run records left: %v, want none (the stop was confirmed)", recs)
			}
			if tc.receipt == "-" {
				if !strings.Contains(stderr.String(), "broken pipe") {
					t.Errorf("tether run --receipt - with stdout closed: stderr = %q, want the write error", stderr)
				}
				assertNoSurvivors(t)
				return
			}
			r, _ := readReceipt(t, rcpt)
			checkStopped(t, r, "cgroup")
			if r.Exit.Signal != tc.signal {
				t.Errorf("tether run: receipt exit.signal = %q, want %q", r.Exit.Signal, tc.signal)
			}
		})
	}
}
