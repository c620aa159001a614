package receipt

import (
	"sync"

	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/version"
)

// Tether is the build of tether that wrote a receipt, from the binary's
// embedded build information: without it a receipt cannot be read against
// the code whose behaviour it claims.
type Tether struct {
	// Version is the module version: a release tag, a pseudo-version of
	// the commit built, or "(devel)" when the build recorded none.
	Version string `json:"version"`
	// Revision is the VCS commit; empty when the build recorded none
	// (go test binaries, -buildvcs=false, or tether used as a library).
	Revision string `json:"revision"`
	// Modified says the build's checkout had uncommitted changes.
	Modified bool `json:"modified"`
	// Executable is the running program's own file: tether's binary, or
	// the program embedding package contain.
	Executable *Executable `json:"executable,omitempty"`
}

// currentBuild is read once: the build cannot change while the program
// runs.
var currentBuild = sync.OnceValue(func() Tether {
	v := version.Get()
	return Tether{Version: v.Version, Revision: v.Revision, Modified: v.Modified}
})

// Host is the machine and boot a run happened in. BootID is what makes
// the identity tokens in the receipt meaningful: a pid and start time name
// a process only within one boot.
type Host struct {
	BootID   string `json:"boot_id"`
	Hostname string `json:"hostname"`
	// Kernel is the kernel release (uname -r): which kernel behaviours the
	// caveats and the stop protocol's evidence rest on.
	Kernel string `json:"kernel"`
}

// NewRunID returns a fresh run id: 128 random bits as 32 lowercase hex
// digits, the form of systemd's $INVOCATION_ID and of the boot id. Random
// rather than time-ordered: uniqueness is the id's one job, and receipts
// are collected from many hosts whose clocks need not agree, so a time
// prefix would promise an order it cannot keep (started_at carries the
// time). 128 bits keep collisions out of reach in any fleet's archive.
func NewRunID() string {
	return randid.Hex(16)
}
