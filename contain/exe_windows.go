package contain

import (
	"io/fs"
	"os"
)

// fileKeyOf is st's mtime: no device or inode here (a file index would
// need a handle), so digests are not cached (hashCached needs an inode).
func fileKeyOf(st fs.FileInfo) fileKey { return fileKey{mtime: st.ModTime().UnixNano()} }

// openNoFollow opens path for reading.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }
