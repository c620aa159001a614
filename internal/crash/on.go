//go:build crashpoints && unix

package crash

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

var (
	mu          sync.Mutex
	at, nth     = parse(os.Getenv(Env))
	occurrences = map[string]int{}
)

// parse reads "name" or "name#N" (die at the Nth occurrence, from 1).
func parse(s string) (string, int) {
	name, n, ok := strings.Cut(s, "#")
	if !ok {
		return s, 1
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 1 {
		return name, 1
	}
	return name, i
}

// Point SIGKILLs the process when $TETHER_CRASH_AT is name (or name#N and
// this is the Nth time the point is passed).
func Point(name string) {
	if at != name {
		return
	}
	mu.Lock()
	occurrences[name]++
	n := occurrences[name]
	mu.Unlock()
	if n == nth {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
}

// Enabled reports whether crash points are compiled in.
const Enabled = true
