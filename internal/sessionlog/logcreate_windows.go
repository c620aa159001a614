package sessionlog

import (
	"os"

	"golang.org/x/sys/windows"
)

// createLog creates the new log file p for appending; p must not exist.
// It is shared for deletion (FILE_SHARE_DELETE), which os.OpenFile does
// not ask for: the log is renamed into place, and later to its rotated
// names, while it is open, as on Unix.
func createLog(p string) (*os.File, error) {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(u, windows.FILE_APPEND_DATA|windows.SYNCHRONIZE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(h), p), nil
}
