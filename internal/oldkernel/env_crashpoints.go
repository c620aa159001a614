//go:build crashpoints

package oldkernel

import (
	"os"
	"strings"
)

// ForceEnv names the old-kernel paths a test binary built with crash
// points takes: a comma-separated list of no-pidfd-info and
// no-cgroup-kill. Release builds ignore it.
const ForceEnv = "TETHER_TEST_FORCE"

func init() {
	for _, f := range strings.Split(os.Getenv(ForceEnv), ",") {
		switch f {
		case "no-pidfd-info":
			noPidfdInfo.Store(true)
		case "no-cgroup-kill":
			noCgroupKill.Store(true)
		}
	}
}
