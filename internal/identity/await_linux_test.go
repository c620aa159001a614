package identity

import (
	"os/exec"
	"testing"
	"time"
)

// TestAwaitChildExit: AwaitChildExit returns for a child that exits
// before it, while it begins and long after, and leaves the child to the
// caller's Wait. The first version lost an exit that came before the
// poller's wait began: `tether run -- true` hung one time in eight.
func TestAwaitChildExit(t *testing.T) {
	for i := range 200 {
		cmd := exec.Command("true")
		if i%20 == 19 {
			cmd = exec.Command("sleep", "0.05")
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			time.Sleep(time.Millisecond) // often exited before the call
		}
		done := make(chan struct{})
		go func() { AwaitChildExit(cmd.Process.Pid); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("round %d: AwaitChildExit did not return for %v, which exited", i, cmd.Args)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("round %d: Wait after AwaitChildExit = %v, want the child's exit 0", i, err)
		}
	}
}
