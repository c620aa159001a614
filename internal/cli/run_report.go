package cli

import (
	"fmt"
	"strings"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/receipt"
)

func startError(name string, err error) error {
	switch contain.StartErrorCode(err) {
	case ExitNotFound:
		return fmt.Errorf("%s: command not found: %w", name, err)
	case ExitNotExec:
		return fmt.Errorf("%s: cannot execute: %w", name, err)
	}
	return fmt.Errorf("cannot start %s: %w", name, err)
}

// stragglersText names what the main process left, the first few by
// their commands, and where the rest of the evidence is.
func stragglersText(r *receipt.Receipt, kept bool) string {
	var names []string
	for i, p := range r.Stragglers {
		if i == 3 {
			names = append(names, "…")
			break
		}
		names = append(names, fmt.Sprintf("%d %s", p.PID, commandText(p.Argv, 40)))
	}
	where := "--receipt FILE keeps the evidence"
	if kept {
		where = "see the receipt"
	}
	return strings.Join(names, ", ") + " (" + where + ")"
}

// summarize tells the user on stderr what tether had to do beyond waiting;
// whether the kill was needed only when the progress report has not said
// so already.
func summarize(e *env, r *receipt.Receipt, reported, kept bool) {
	if r.Exit.OOMKilled {
		e.warnf("main process was OOM-killed: the group hit its memory limit (%d OOM kills)", r.Limits.Outcome.OOMKills)
	} else if r.Limits != nil && r.Limits.Outcome != nil && r.Limits.Outcome.OOMKills > 0 {
		e.warnf("the OOM killer killed %d processes of the group", r.Limits.Outcome.OOMKills)
	}
	if r.Limits != nil && r.Limits.Outcome != nil && r.Limits.Outcome.PidsLimitHits > 0 {
		e.warnf("the group hit its pids limit %d times (forks failed)", r.Limits.Outcome.PidsLimitHits)
	}
	if r.TimedOut {
		e.warnf("timed out; stopped %d processes", r.Evidence.MembersSeen)
	}
	warnStorage(e, r)
	if r.StragglersTotal > 0 {
		e.warnf("main process exited; stopped %d %s it left: %s", r.StragglersTotal,
			plural(r.StragglersTotal, "straggler", "stragglers"), stragglersText(r, kept))
	}
	if r.Evidence.KillUsed && !reported {
		if graceSkipped(r) {
			e.warnf("the polite stop reached no process; the members were killed")
		} else {
			e.warnf("members outlived the grace period and were killed")
		}
	}
}

// graceSkipped reports whether the stop skipped its grace because the
// polite request reached no one (Windows, where CTRL_BREAK_EVENT can be
// refused).
func graceSkipped(r *receipt.Receipt) bool {
	for _, st := range r.Stop.Steps {
		if st.Name == "grace" && strings.HasPrefix(st.Observed, "skipped") {
			return true
		}
	}
	return false
}
