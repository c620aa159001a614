//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
)

// ReplaceAt is Replace of the file name in the directory open as dirfd:
// every step is relative to dirfd (openat, renameat), so a rename of the
// directory, or a symlink put in its place, after the caller opened it
// redirects nothing (issue 22). name is one path element; path is the
// file's path, for errors only. dirfd stays the caller's to close.
func ReplaceAt(dirfd int, name, path string, data []byte, perm os.FileMode) error {
	return at(dirfd, path).replace(name, data, perm, false, false)
}

// CreateAt is Create of the file name in the directory open as dirfd,
// relative to dirfd as ReplaceAt: an existing name, a dangling symlink
// included, fails with an error satisfying errors.Is(err, fs.ErrExist).
func CreateAt(dirfd int, name, path string, data []byte, perm os.FileMode) error {
	return at(dirfd, path).create(name, data, perm)
}

// at is the directory dirfd, in which path is a file.
func at(dirfd int, path string) dir { return dir{fd: dirfd, path: filepath.Dir(path)} }
