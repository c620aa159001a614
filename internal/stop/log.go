package stop

import (
	"slices"
	"time"

	"github.com/tether-run/tether/receipt"
)

// Log is what one stop records for its receipt: the steps in order, the
// evidence, and the caveats of the paths it took. The driver and the
// group it stops both write to it.
type Log struct {
	// T0 is when the stop began (Steps' ElapsedMS); zero means Drive's
	// start.
	T0 time.Time
	// Progress, if set, is called with each step as it is recorded (for
	// a person watching a long stop); it must not block.
	Progress func(receipt.Step)

	Steps    []receipt.Step
	Evidence receipt.Evidence
	Caveats  []string
}

// Step records a step that ends now.
func (l *Log) Step(name, observed string, members int, err error) {
	l.StepFrom(time.Now(), name, observed, members, err)
}

// StepFrom records a step whose At is when it began (the kill step: the
// kill's latency is measured from there).
func (l *Log) StepFrom(at time.Time, name, observed string, members int, err error) {
	if l.T0.IsZero() {
		l.T0 = at
	}
	s := receipt.Step{Name: name, At: at.UTC(), ElapsedMS: at.Sub(l.T0).Milliseconds(), Observed: observed, Members: members}
	if err != nil {
		s.Error = err.Error()
	}
	l.Steps = append(l.Steps, s)
	if l.Progress != nil {
		l.Progress(s)
	}
}

// Unconfirmed lists the token tok among e's members not confirmed gone,
// once: an orphan still running at the reap's deadline may be a member
// the confirmation lists too.
func Unconfirmed(e *receipt.Evidence, tok string) {
	if !slices.Contains(e.Unconfirmed, tok) {
		e.Unconfirmed = append(e.Unconfirmed, tok)
	}
}
