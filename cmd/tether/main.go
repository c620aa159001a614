// Command tether runs commands so that everything they start has an owner
// and is stopped with them. See README.md.
package main

import (
	"os"

	"github.com/tether-run/tether/internal/cli"
)

func main() { os.Exit(cli.Tether()) }
