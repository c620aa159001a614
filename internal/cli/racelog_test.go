package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// raceLogs makes the race detector of every tether process the tests start
// (runs, supervisors, stops) write its reports into a directory of its
// own: a supervisor's stderr goes nowhere, and a report there would be
// lost. It returns a check to call after the tests, which prints every
// report and says whether there was one.
func raceLogs() (check func() bool) {
	if !raceEnabled {
		return func() bool { return true }
	}
	dir, err := os.MkdirTemp("", "tether-cli-race-")
	if err != nil {
		panic(err)
	}
	gorace := os.Getenv("GORACE") + " log_path=" + filepath.Join(dir, "race")
	if !strings.Contains(gorace, "atexit_sleep_ms") {
		// The race runtime sleeps a second before each process exits, to
		// let goroutines still running race with the exit: in every
		// tether the tests start, hundreds of them, it was most of the
		// -race run (cli 765 s, 94 s without -race; issue 30). 20 ms
		// keeps a scheduling slice for them.
		gorace += " atexit_sleep_ms=20"
	}
	os.Setenv("GORACE", strings.TrimSpace(gorace))
	return func() bool {
		defer os.RemoveAll(dir)
		logs, _ := filepath.Glob(filepath.Join(dir, "race.*"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			fmt.Fprintf(os.Stderr, "FAIL: data race in a tether process the tests started (%s):\n%s\n", filepath.Base(l), b)
		}
		return len(logs) == 0
	}
}
