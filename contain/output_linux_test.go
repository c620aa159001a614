package contain

import (
	"sync"
	"testing"
	"time"
)

// slowWriter takes each write slowly, and counts the writes that were
// under way, or began, after Wait returned.
type slowWriter struct {
	mu       sync.Mutex
	returned bool // Wait has returned
	late     int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	late := w.returned
	w.mu.Unlock()
	time.Sleep(700 * time.Millisecond)
	w.mu.Lock()
	if late || w.returned {
		w.late++
	}
	w.mu.Unlock()
	return len(p), nil
}

// TestNoWriteAfterWait: output that cannot be drained within the cut-off
// is cut off, and nothing is written to the caller's writer once Wait has
// returned (issue 9: the copies used to go on writing after Wait).
func TestNoWriteAfterWait(t *testing.T) {
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			// 60,000 bytes fit in the pipe, so the command exits at once;
			// the copy reads them in two chunks of at most 32 KiB and
			// needs two slow writes, longer than the cut-off.
			c := Command("head", "-c", "60000", "/dev/zero")
			c.Mechanism = mech
			w := &slowWriter{}
			c.Stdout = w
			if err := c.Run(); err != nil {
				t.Fatalf("Run() = %v", err)
			}
			w.mu.Lock()
			w.returned = true
			w.mu.Unlock()
			time.Sleep(2 * time.Second) // long enough for a late write to show
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.late != 0 {
				t.Errorf("writes to Stdout under way or begun after Wait returned = %d, want 0", w.late)
			}
		})
	}
}
