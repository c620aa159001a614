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
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" log_path="+filepath.Join(dir, "race")))
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
