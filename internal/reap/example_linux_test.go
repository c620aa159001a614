package reap_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
)

// crashEnv makes this test binary the program that crashes in ExampleRun.
const crashEnv = "TETHER_EXAMPLE_CRASH"

func init() {
	if state := os.Getenv(crashEnv); state != "" {
		c := contain.Command("sh", "-c", "setsid sleep 1000 & echo up; wait")
		c.StateDir = state // the run keeps a record while it runs
		c.Stdout = os.Stdout
		c.Run()
		os.Exit(0)
	}
}

// A program that runs commands with contain.Cmd.Registry set dies by
// SIGKILL while one runs, leaving the command's daemon behind (here the
// program is this test binary started again). reap.Run finds the run's
// record, proves what is still the run's by its cgroup's id, stops it and
// writes the receipt the dead program could not.
func ExampleRun() {
	state, _ := os.MkdirTemp("", "tether-example-")
	defer os.RemoveAll(state)
	os.Chmod(state, 0o700)

	crashed := exec.Command(os.Args[0])
	// TETHER_NO_WATCH: as if the program's watcher had died with it.
	// Otherwise the watcher stops the group within a second of the
	// program's death, and reap finds only its receipt.
	crashed.Env = append(os.Environ(), crashEnv+"="+state, "TETHER_NO_WATCH=1")
	out, _ := crashed.StdoutPipe()
	crashed.Start()
	bufio.NewReader(out).ReadString('\n') // "up": the daemon runs
	crashed.Process.Kill()
	crashed.Wait()

	reg, err := store.Open(state)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range reap.Run(reg, reap.Options{}).Actions {
		fmt.Println(a.Kind, a.Class, "done:", a.Done)
		// The daemon, and the main process if its parent-death signal has
		// not ended it yet: at least one member.
		fmt.Println("stop confirmed:", a.Receipt.StopConfirmed, "members stopped:", a.Receipt.Evidence.MembersSeen >= 1)
	}
	// Output:
	// run dead-supervisor-leaf done: true
	// stop confirmed: true members stopped: true
}
