package limits

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// CheckFree refuses (ErrInsufficientSpace) when the filesystem holding
// path has less than need bytes available to unprivileged users.
func CheckFree(path string, need int64) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return fmt.Errorf("limits: --require-free %s: %w", path, &os.PathError{Op: "statfs", Path: path, Err: err})
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	if free < need {
		return fmt.Errorf("%w: --require-free %s=%s: only %s free on the filesystem holding %s", ErrInsufficientSpace, path, FormatSize(need), FormatSize(free), path)
	}
	return nil
}
