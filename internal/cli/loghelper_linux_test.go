package cli_test

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// interleave writes n numbered lines alternately to stdout and stderr,
// one write each, and after each write waits until the reader has taken
// it (the pipe is empty: FIONREAD works on either end): the order of
// its writes is then the order of their arrival at the supervisor, which
// is what the log promises to keep.
func interleave(n int) int {
	for i := 1; i <= n; i++ {
		for fd, s := range []string{"out", "err"} {
			if _, err := unix.Write(fd+1, []byte(s+" "+strconv.Itoa(i)+"\n")); err != nil {
				return 1
			}
			for {
				if q, err := unix.IoctlGetInt(fd+1, unix.TIOCINQ); err != nil || q == 0 { // TIOCINQ is FIONREAD
					break
				}
				time.Sleep(20 * time.Microsecond)
			}
		}
	}
	return 0
}
