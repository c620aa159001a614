package store

import "golang.org/x/sys/unix"

// pathFlags open a directory of a state directory's path: O_PATH needs
// only search permission on it, as a path lookup does.
const pathFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
