package limits

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Storage is a storage ceiling (tether run --storage-max PATH=SIZE): the
// bytes under Path, counted by a census of the files there, may not
// exceed Max. It is enforced by tether, not the kernel: a census before
// the command starts (already over: the start is refused), every second
// while it runs (over: the group is stopped) and at the end.
type Storage struct {
	Path string // absolute, cleaned
	Max  int64  // bytes
}

// ParseStorage parses PATH=SIZE, split at the last '='. PATH is made absolute (relative to the
// working directory); SIZE is as ParseSize reads it and must be more
// than 0.
func ParseStorage(s string) (Storage, error) {
	i := strings.LastIndex(s, "=") // PATH may hold '=', SIZE never does
	path, size := s[:max(i, 0)], s[i+1:]
	if i <= 0 {
		return Storage{}, fmt.Errorf("%w: %q: want PATH=SIZE", ErrSyntax, s)
	}
	max, err := ParseSize(size)
	if err != nil {
		return Storage{}, fmt.Errorf("%q: %w", s, err)
	}
	if max == 0 {
		return Storage{}, fmt.Errorf("%w: %q: the ceiling must be more than 0", ErrSyntax, s)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Storage{}, fmt.Errorf("%q: %w", s, err)
	}
	return Storage{Path: abs, Max: max}, nil
}
