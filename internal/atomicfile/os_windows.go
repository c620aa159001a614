package atomicfile

// closeBeforeRename: Windows refuses to rename over a file that is open
// without FILE_SHARE_DELETE, as os.OpenFile opens it. The placeholder is
// closed after the check that it is ours, which widens the window between
// check and rename described at Commit by the time of a close.
const closeBeforeRename = true

// dirSync is false: a directory opened for reading cannot be flushed on
// Windows (FlushFileBuffers needs write access: "Access denied"), and
// NTFS journals the rename's metadata itself.
const dirSync = false
