//go:build unix

package cli

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// receiptFD returns descriptor n as a file to write the receipt to, once
// it is proven open for writing, and marks it close-on-exec.
func receiptFD(n int) (*os.File, error) {
	fl, err := unix.FcntlInt(uintptr(n), unix.F_GETFL, 0)
	if err != nil {
		return nil, errors.New("not open (open it in the shell: 3>run.json)")
	}
	if mode := fl & unix.O_ACCMODE; mode != unix.O_WRONLY && mode != unix.O_RDWR {
		return nil, errors.New("not open for writing (3>run.json, not 3<run.json)")
	}
	unix.CloseOnExec(n)
	return os.NewFile(uintptr(n), "fd "+strconv.Itoa(n)), nil
}
