package session

import (
	"os"

	"golang.org/x/sys/windows"
)

// fileID names the file f is open on: its volume serial and file index.
func fileID(f *os.File) ([3]uint64, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return [3]uint64{}, &os.PathError{Op: "GetFileInformationByHandle", Path: f.Name(), Err: err}
	}
	return [3]uint64{uint64(info.VolumeSerialNumber), uint64(info.FileIndexHigh), uint64(info.FileIndexLow)}, nil
}
