package contain_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/tether-run/tether/contain"
)

// Run a command with a deadline. When the context is done, the stop
// protocol runs on everything the command started — here a daemon it
// left in its own session — and Wait returns once the kernel confirmed
// the group empty. The error is os/exec's, for code that expects it.
func ExampleCommandContext() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c := contain.CommandContext(ctx, "sh", "-c", "setsid sleep 1000 & echo started; exec sleep 1000")
	out, err := c.Output()
	fmt.Printf("%s", out)

	var ee *exec.ExitError
	if errors.As(err, &ee) {
		fmt.Println("main process:", ee) // what os/exec would say
	}
	r := c.Receipt()
	fmt.Println("stopped because:", r.Stop.Reason)
	fmt.Println("the daemon was a member too:", r.Evidence.MembersSeen == 2)
	fmt.Println("confirmed empty:", r.StopConfirmed)
	// Output:
	// started
	// main process: signal: terminated
	// stopped because: context
	// the daemon was a member too: true
	// confirmed empty: true
}

// Run a command to its end and see what it left behind: the receipt lists
// the stragglers the stop protocol found after the main process exited.
func ExampleCmd_Receipt() {
	// The command ends once its daemon runs sleep, so that the argv read
	// for it is settled (a fixed sleep 0.1 could end it mid-exec).
	c := contain.Command("sh", "-c", `setsid sleep 1000 & until [ "$(head -c 5 /proc/$!/cmdline)" = sleep ]; do sleep 0.01; done`)
	if err := c.Run(); err != nil {
		fmt.Println("run:", err)
		return
	}
	r := c.Receipt()
	fmt.Println("exit code:", r.Exit.Code)
	for _, p := range r.Stragglers {
		fmt.Println("straggler:", p.Argv)
	}
	fmt.Println("confirmed empty:", r.StopConfirmed)
	// Output:
	// exit code: 0
	// straggler: [sleep 1000]
	// confirmed empty: true
}

// Output and *exec.ExitError work as with os/exec: a failing command's
// exit code and the start of its stderr.
func ExampleCmd_Output() {
	out, err := contain.Command("sh", "-c", "echo result; echo oops >&2; exit 3").Output()
	fmt.Printf("stdout: %s", out)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		fmt.Printf("exit %d, stderr: %s", ee.ExitCode(), ee.Stderr)
	}
	// Output:
	// stdout: result
	// exit 3, stderr: oops
}
