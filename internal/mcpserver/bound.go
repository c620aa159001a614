package mcpserver

import (
	"fmt"
	"sync"
)

// MaxOutput bounds the output a tool result carries (a run's, exec's,
// logs'): the tail of what was written is kept. It is in the result twice
// (its text and its structured content), so a result stays under 64 KiB
// and a few hundred bytes.
const MaxOutput = 32 << 10

// tail is an io.Writer that keeps the last max bytes written and counts
// what it dropped.
type tail struct {
	mu      sync.Mutex
	max     int
	b       []byte
	dropped int64
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.dropped += int64(len(t.b) + len(p) - t.max)
		t.b = append(t.b[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.dropped += int64(over)
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
}

// text is what was kept, after a line saying what was dropped (if any).
func (t *tail) text() (string, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped == 0 {
		return string(t.b), 0
	}
	return fmt.Sprintf("[%d earlier bytes dropped: the output is bounded to its last %d]\n%s", t.dropped, t.max, t.b), t.dropped
}
