package cli

// runRecords is false on macOS: a run leaves no record for reap, which
// has nothing there yet to prove a dead run's processes by.
const runRecords = false

// systemName and supportedWhat word the refusal of the rest.
const (
	systemName    = "macOS"
	supportedWhat = "issue 14: tether run is, with the command in a process group and session of its own, its processes found in the process table; built and unit-tested, not yet run on macOS"
)

// supportedHere are the commands that work on macOS so far: tether run
// and help. Every other command says so instead of acting on machinery
// this system lacks.
var supportedHere = map[string]bool{"run": true, "completion": true, "help": true}
