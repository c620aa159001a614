package cli

import (
	"testing"
	"time"

	"github.com/tether-run/tether/session"
)

// TestLogsFlags: logs's flags and name as parsed, without reading any
// log.
func TestLogsFlags(t *testing.T) {
	since := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	checkFlags(t, "logs", ExitUsage, newLogsCmdRun, []flagCase[logsOptions]{
		{[]string{"web"}, &logsOptions{name: "web", log: session.LogOptions{Tail: -1}}, ""},
		{[]string{"-f", "-n", "20", "-t", "--stream", "stderr", "web"}, &logsOptions{name: "web", log: session.LogOptions{Follow: true, Tail: 20, Timestamps: true, Stream: "err"}}, ""},
		{[]string{"--since", "2026-12-01T04:00:00Z", "--stream", "out", "--json", "--run", "3f2a", "web"}, &logsOptions{name: "web", log: session.LogOptions{Tail: -1, Since: since, Stream: "out", JSON: true, Run: "3f2a"}}, ""},
		{[]string{"--stream", "both", "web"}, nil, `--stream "both": want out or err`},
		{[]string{"--since", "yesterday", "web"}, nil, `--since "yesterday"`},
		{[]string{"--tail", "x", "web"}, nil, "tail"},
		{[]string{}, nil, "one session NAME"},
	})
}
