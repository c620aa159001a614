package cli

import (
	"runtime"
	"syscall"
	"testing"
)

// TestKillFlags: kill's flags and name as parsed, without signalling
// anything.
func TestKillFlags(t *testing.T) {
	term, err := parseSignal("TERM") // 0 on Windows: the only stop there is
	if err != nil {
		t.Fatal(err)
	}
	cases := []flagCase[killOptions]{
		{[]string{"web"}, &killOptions{name: "web", sig: term}, ""},
		{[]string{"--all", "web"}, &killOptions{name: "web", sig: term, all: true}, ""},
		{[]string{"-s", "FOO", "web"}, nil, "--signal"},
		{[]string{}, nil, "one session NAME"},
		{[]string{"web", "api"}, nil, "one session NAME"},
		{[]string{"Bad/name"}, nil, "Bad/name"},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases,
			flagCase[killOptions]{[]string{"-s", "HUP", "web"}, &killOptions{name: "web", sig: syscall.SIGHUP}, ""},
			flagCase[killOptions]{[]string{"--all", "-s", "9", "web"}, &killOptions{name: "web", sig: syscall.SIGKILL, all: true}, ""},
			flagCase[killOptions]{[]string{"-s", "0", "web"}, nil, "no such signal"},
		)
	}
	checkFlags(t, "kill", ExitUsage, newKillCmdRun, cases)
}
