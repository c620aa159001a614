package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/session"
)

type logsFlags struct {
	follow, timestamps, json bool
	tail                     int
	since, stream, run       string
}

func newLogsCmd(e *env) *cobra.Command {
	var f logsFlags
	cmd := &cobra.Command{
		Use:   "logs NAME [--run ID] [-f] [--tail N] [--since D|TIME] [--timestamps] [--stream out|err] [--json]",
		Short: "Print a session's output (stdout and stderr, interleaved in order)",
		Long: `Print what the session's command wrote: stdout and stderr as one log, in the
order the supervisor read them (exact within a stream; across streams, the
order of arrival). The plain view prints exactly the bytes the command
wrote. --timestamps prefixes each line with its time (UTC) and stream;
--json prints JSON Lines {"time","stream","line"} ("line_base64" instead of
"line" when the line is not UTF-8; "partial" for a line without its end).

The log is bounded: it rotates by size through a number of files (tether
start --log-max, --log-keep); what was rotated away, or dropped because the
disk refused it, is reported on stderr where the output has a gap.

Each run of a name keeps its own log: without --run, the newest run's is
printed; --run ID prints an earlier one's (tether ls -a lists the runs; a
prefix of the id that only one run has will do).

With -f, keep printing new output, across rotations, until the session has
stopped (exit 0) or its supervisor is gone (exit 1: nothing will write the
log again; tether reap reclaims the session).`,
		Example: `  tether logs web
  tether logs -f --tail 20 web
  tether logs --run 3f2a9c web
  tether logs --since 10m --stream err --timestamps web
  tether logs --json web | jq -r 'select(.stream=="stderr") | .line'`,
		Args:              namedArgs(1, cobra.ExactArgs(1)),
		ValidArgsFunction: completeSessions(e, true, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := session.LogOptions{Follow: f.follow, Tail: f.tail, Timestamps: f.timestamps, JSON: f.json, Notes: e.stderr, Run: f.run}
			switch f.stream {
			case "", "out", "err":
				o.Stream = f.stream
			case "stdout", "stderr":
				o.Stream = f.stream[3:]
			default:
				return exit(ExitUsage, fmt.Errorf("--stream %q: want out or err", f.stream))
			}
			if f.since != "" {
				t, err := parseSince(f.since, time.Now())
				if err != nil {
					return exit(ExitUsage, err)
				}
				o.Since = t
			}
			client, err := openClient(e)
			if err != nil {
				return exit(ExitFailure, err)
			}
			if err := client.Logs(context.Background(), args[0], e.stdout, o); err != nil {
				return sessionExit(args[0], err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.follow, "follow", "f", false, "follow the log until the session stops")
	intVarP(fl, &f.tail, "tail", "n", -1, "print only the last `N` lines (then follow, with -f)")
	fl.StringVar(&f.since, "since", "", "print only output since a time (2026-12-01T04:00:00Z, 2026-12-01 04:00) or a duration ago (10m, 90 seconds as 90)")
	fl.BoolVarP(&f.timestamps, "timestamps", "t", false, "prefix each line with its time (UTC) and stream")
	fl.StringVar(&f.stream, "stream", "", "print one stream only: out or err")
	fl.BoolVar(&f.json, "json", false, `print JSON Lines: {"time","stream","line"}`)
	fl.StringVar(&f.run, "run", "", "print the log of the run with this run `ID` (or a prefix of it; tether ls -a lists them), not the newest")
	cmd.RegisterFlagCompletionFunc("run", completeRuns(e))
	return cmd
}

// sinceLayouts are the times --since takes besides RFC 3339; without a
// zone they are local time.
var sinceLayouts = []string{"2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"}

// parseSince reads --since: a duration before now (a Go duration, or bare
// seconds as timeout(1) takes them) or a time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil && n >= 0 {
		return now.Add(-time.Duration(n * float64(time.Second))), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, l := range sinceLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (10m, 1h30m, 90) or a time (2026-12-01T04:00:00Z, 2026-12-01 04:00)", s)
}
