//go:build !unix

package cli

import "os"

// forwardedSignals are what tether exec passes on to its command.
var forwardedSignals = []os.Signal{os.Interrupt}
