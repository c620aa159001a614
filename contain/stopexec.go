package contain

import (
	"bytes"
	"sync"
	"time"

	"github.com/tether-run/tether/receipt"
)

// stopExecOutput bounds the output a stop-exec step keeps: its tail.
const stopExecOutput = 2 << 10

// runStopExec runs c.StopExec by deadline as a contained run of its own
// (no record: it lives inside this stop), and says how it ended.
func (c *Cmd) runStopExec(deadline time.Time) *receipt.StopExec {
	x := &receipt.StopExec{Argv: append([]string(nil), c.StopExec...)}
	r := Command(c.StopExec[0], c.StopExec[1:]...)
	r.Env, r.Dir = c.Env, c.Dir
	r.Mechanism, r.CgroupParent = c.Mechanism, c.CgroupParent
	r.Timeout = max(time.Until(deadline), time.Millisecond)
	r.Grace = NoGrace
	var out tailBuffer
	r.Stdout, r.Stderr = &out, &out
	r.Run()
	x.ExitCode = r.ExitCode()
	x.Output = out.String()
	return x
}

// tailBuffer keeps the last stopExecOutput bytes written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b.Write(p)
	if n := t.b.Len() - stopExecOutput; n > 0 {
		t.b.Next(n)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}
