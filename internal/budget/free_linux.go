package budget

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/tether-run/tether/limits"
)

// CheckFree refuses (limits.ErrInsufficientSpace) when the filesystem holding
// path has less than need bytes available to unprivileged users.
func CheckFree(path string, need int64) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return fmt.Errorf("limits: --require-free %s: %w", path, &os.PathError{Op: "statfs", Path: path, Err: err})
	}
	free := int64(fs.Bavail) * int64(fs.Bsize)
	if free < need {
		return fmt.Errorf("%w: --require-free %s=%s: only %s free on the filesystem holding %s", limits.ErrInsufficientSpace, path, limits.FormatSize(need), limits.FormatSize(free), path)
	}
	return nil
}
