package cli_test

import (
	"fmt"
	"os"
	"strconv"
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
	if code, ok := runOSHelper(name, args); ok {
		return code
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
	return 2
}
