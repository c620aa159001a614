// Command tether runs commands so that everything they start has an owner
// and is stopped with them. See README.md.
package main

import (
	"os"

	"github.com/tether-run/tether/cli"
	"github.com/tether-run/tether/session"
)

func main() {
	// A session's supervisor is this binary started again: it runs here
	// and exits, before anything else.
	session.MaybeSupervise()
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
