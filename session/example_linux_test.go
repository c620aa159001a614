package session_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tether-run/tether/session"
)

// Start a named session, reach it from outside, and stop it. The program
// is its sessions' supervisor: it calls session.MaybeSupervise first
// thing in main (this test binary does in TestMain), so the session goes
// on after the goroutine, or the whole program, that started it is gone.
func ExampleClient() {
	state, _ := os.MkdirTemp("", "tether-example-")
	defer os.RemoveAll(state)
	os.Chmod(state, 0o700)
	client, err := session.Open(state)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	rec, err := client.Start(ctx, session.Options{
		Name:  "web",
		Argv:  []string{"sh", "-c", "echo serving; exec sleep 1000"},
		Owner: "none", // lives until stopped; "parent" or a PID binds it to an owner
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("started:", rec.Name, rec.State)

	// A command run in the session belongs to it, and sees its variables.
	exit, err := client.Exec(ctx, "web", session.ExecOptions{
		Argv:   []string{"sh", "-c", `echo "inside $TETHER_SESSION"`},
		Stdout: os.Stdout,
	})
	fmt.Println("exec exit:", exit.Code, err)

	r, err := client.Stop(ctx, "web", session.StopOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stopped:", r.Stop.Reason, "confirmed:", r.StopConfirmed)
	// Output:
	// started: web running
	// inside web
	// exec exit: 0 <nil>
	// stopped: request confirmed: true
}
