//go:build !windows

package atomicfile

// closeBeforeRename: a rename replaces an open file here.
const closeBeforeRename = false

// dirSync: a rename is durable once its directory is synced.
const dirSync = true
