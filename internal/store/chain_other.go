//go:build unix && !linux

package store

import "golang.org/x/sys/unix"

// pathFlags open a directory of a state directory's path. Without O_PATH
// the walk needs read permission on each directory, not only search.
const pathFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
