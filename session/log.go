package session

import (
	"os"
	"sync"
)

// DefaultLogMax bounds a session's log: past it the log is rotated to
// NAME.log.1, so at most twice this is kept.
const DefaultLogMax = 8 << 20

// rotatingLog is an io.Writer to a file that rotates once it grows past
// max bytes.
type rotatingLog struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
	n    int64
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
	return &rotatingLog{path: path, max: max, f: f}, nil
}

func (l *rotatingLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n+int64(len(p)) > l.max && l.n > 0 {
		l.f.Close()
		os.Rename(l.path, l.path+".1")
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return 0, err
		}
		l.f, l.n = f, 0
	}
	n, err := l.f.Write(p)
	l.n += int64(n)
	return n, err
}

func (l *rotatingLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
