// Command embed is a small test runner that embeds tether the way an
// outside program does: it runs each test command contained, with a
// deadline, and keeps a dev server in a named session that outlives any
// one test. It is built and tested against tether's public API only
// (go.mod replaces the module with this checkout).
//
//	embed -timeout 30s -- go test ./...
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/session"
)

func main() {
	// First thing: if this process was started as a session's
	// supervisor, it runs as one and exits here.
	session.MaybeSupervise()

	timeout := flag.Duration("timeout", time.Minute, "stop the command and everything it started after this long")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: embed [-timeout D] -- COMMAND [ARG...]")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	code, err := runContained(ctx, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
	}
	os.Exit(code)
}

// runContained runs argv to its end or the deadline, whichever is first,
// and stops everything it started either way.
func runContained(ctx context.Context, argv []string) (int, error) {
	c := contain.CommandContext(ctx, argv[0], argv[1:]...)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	err := c.Run()
	var ee *exec.ExitError
	switch {
	case errors.Is(err, contain.ErrNotConfirmed):
		return 125, err
	case errors.As(err, &ee):
		return c.ExitCode(), nil
	case err != nil:
		return 125, err
	}
	if n := c.Receipt().StragglersTotal; n > 0 {
		fmt.Fprintf(os.Stderr, "embed: stopped %d processes the command left behind\n", n)
	}
	return 0, nil
}
