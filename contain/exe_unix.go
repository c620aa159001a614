//go:build unix

package contain

import (
	"io/fs"
	"os"
	"syscall"
)

// fileKeyOf is st's device, inode, mtime and ctime.
func fileKeyOf(st fs.FileInfo) fileKey {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{mtime: st.ModTime().UnixNano()}
	}
	return fileKey{dev: uint64(s.Dev), ino: uint64(s.Ino), mtime: st.ModTime().UnixNano(), ctime: ctimeOf(s)}
}

// openNoFollow opens path for reading, refusing a symlink.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
