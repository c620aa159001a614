package sessionctl

import (
	"fmt"
	"os"
)

// OpenRegular opens path for reading only if it is a regular file:
// Windows has no FIFOs in the file system, but a directory or a reparse
// point in a file's place is refused as on Unix.
func OpenRegular(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("session: %s is not a regular file: refused", path)
	}
	return os.Open(path)
}

// CreateExclusive creates path, which must not exist, for appending.
func CreateExclusive(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
}
