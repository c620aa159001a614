package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/session"
)

// logsOptions is `tether logs` as its flags and argument resolved it.
type logsOptions struct {
	name string
	log  session.LogOptions // Notes unset: runLogs's stderr
}

func newLogsCmd(e *env) *cobra.Command { return newLogsCmdRun(e, runLogs) }

// newLogsCmdRun is newLogsCmd with run called on the parsed options.
func newLogsCmdRun(e *env, run func(*env, *logsOptions) error) *cobra.Command {
	var o logsOptions
	var since, stream string
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
			o.name = args[0]
			switch stream {
			case "", "out", "err":
				o.log.Stream = stream
			case "stdout", "stderr":
				o.log.Stream = stream[3:]
			default:
				return exit(ExitUsage, fmt.Errorf("--stream %q: want out or err", stream))
			}
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return exit(ExitUsage, err)
				}
				o.log.Since = t
			}
			return run(e, &o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.log.Follow, "follow", "f", false, "follow the log until the session stops")
	intVarP(fl, &o.log.Tail, "tail", "n", -1, "print only the last `N` lines (then follow, with -f)")
	fl.StringVar(&since, "since", "", "print only output since a time (2026-12-01T04:00:00Z, 2026-12-01 04:00) or a duration ago (10m, 90 seconds as 90)")
	fl.BoolVarP(&o.log.Timestamps, "timestamps", "t", false, "prefix each line with its time (UTC) and stream")
	fl.StringVar(&stream, "stream", "", "print one stream only: out or err")
	fl.BoolVar(&o.log.JSON, "json", false, `print JSON Lines: {"time","stream","line"}`)
	fl.StringVar(&o.log.Run, "run", "", "print the log of the run with this run `ID` (or a prefix of it; tether ls -a lists them), not the newest")
	cmd.RegisterFlagCompletionFunc("run", completeRuns(e))
	return cmd
}

// runLogs prints o's session's log.
func runLogs(e *env, o *logsOptions) error {
	client, err := openClient(e)
	if err != nil {
		return exit(ExitFailure, err)
	}
	lo := o.log
	lo.Notes = e.stderr
	if err := client.Logs(context.Background(), o.name, e.stdout, lo); err != nil {
		return sessionExit(o.name, err)
	}
	return nil
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
