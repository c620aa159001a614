package cli_test

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// helperEnv makes the test binary a helper command for sessions (the
// standard library's helper-process pattern): its value names the helper.
// It is honoured only without asTetherEnv, which a session's command
// inherits from tether start, so commands use helperCmd.
const helperEnv = "TETHER_TEST_HELPER"

// helperCmd returns the argv of a session command running helper name.
func helperCmd(name string, args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return append([]string{"env", "-u", asTetherEnv, helperEnv + "=" + name, exe}, args...)
}

func runHelper(name string, args []string) int {
	switch name {
	case "interleave":
		n, _ := strconv.Atoi(args[0])
		return interleave(n)
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
	return 2
}

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
