package sessionlog

import (
	"bytes"

	"github.com/tether-run/tether/internal/store"
)

// Unwritten reports whether the log at path holds no output: one file
// holding its first generation's header and nothing else, as a session's
// supervisor made it before the command could run. Anything more, a file
// that cannot be read, a symlink or rotated generations: false.
func Unwritten(path string) bool {
	if len(store.LogFiles(path)) != 1 {
		return false
	}
	f, err := openLogReader(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [512]byte
	n, _ := f.ReadAt(b[:], 0)
	line, rest, ok := bytes.Cut(b[:n], []byte{'\n'})
	if !ok || len(rest) > 0 || n == len(b) {
		return false
	}
	e, err := parseEntry(line)
	if err != nil {
		return false
	}
	seq, ok := parseHeader(e)
	return ok && seq == 0
}
