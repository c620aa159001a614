package session

import (
	"bytes"
	"os"
	"sync"
	"time"

	"github.com/tether-run/tether/receipt"
)

// DefaultLogMax bounds a session's log: past it the log is rotated to
// NAME.log.1, so at most twice this is kept.
const DefaultLogMax = 8 << 20

// rotatingLog is an io.Writer to a file that rotates once it grows past
// max bytes.
//
// Its Write never fails: a write the file refuses (ENOSPC, EROFS, EIO) is
// dropped and counted instead. The session's output is copied from a pipe,
// and a failed Write would end the copy and close the pipe's read end, so
// that the session's own processes died of SIGPIPE at their next write:
// a full state disk must not kill the workload.
type rotatingLog struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File // nil after a failed reopen: retried at the next write
	n    int64
	loss receipt.OutputLoss
	// lost is signalled (never blocking) each time output is dropped.
	lost chan struct{}
}

func openLog(path string, max int64) (*rotatingLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	os.Remove(path + ".1")
	if max <= 0 {
		max = DefaultLogMax
	}
	return &rotatingLog{path: path, max: max, f: f, lost: make(chan struct{}, 1)}, nil
}

// Write writes p, dropping (and counting) what the file refuses. It
// always reports len(p) written.
func (l *rotatingLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.write(p)
	if err != nil {
		l.drop(p[n:], err)
	}
	return len(p), nil
}

func (l *rotatingLog) write(p []byte) (int, error) {
	if l.f != nil && l.n+int64(len(p)) > l.max && l.n > 0 {
		l.f.Close()
		l.f = nil
		os.Rename(l.path, l.path+".1")
	}
	if l.f == nil {
		// No O_TRUNC: if the rename failed, the file there is the log.
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return 0, err
		}
		l.f, l.n = f, 0
		if st, err := f.Stat(); err == nil {
			l.n = st.Size()
		}
	}
	n, err := l.f.Write(p)
	l.n += int64(n)
	return n, err
}

// drop counts p as lost to err.
func (l *rotatingLog) drop(p []byte, err error) {
	if l.loss.Error == "" {
		l.loss.FirstAt = time.Now().UTC()
		l.loss.Error = err.Error()
	} else if msg := err.Error(); msg != l.loss.Error {
		l.loss.LastError = msg
	}
	l.loss.DroppedBytes += int64(len(p))
	l.loss.DroppedLines += int64(bytes.Count(p, []byte{'\n'}))
	select {
	case l.lost <- struct{}{}:
	default:
	}
}

// Loss returns what was dropped so far, or nil if nothing was.
func (l *rotatingLog) Loss() *receipt.OutputLoss {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loss.Error == "" {
		return nil
	}
	loss := l.loss
	return &loss
}

func (l *rotatingLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
