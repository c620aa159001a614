package cli

// runRecords is true on macOS: a run's record names tether and the main
// process, so that reap can kill a main process that outlived a killed
// tether (what it started cannot be proven there).
const runRecords = true

// systemName and supportedWhat word the refusal of the rest.
const (
	systemName    = "macOS"
	supportedWhat = "issue 14: tether run, reap and the session commands start, ls, status, stop, logs, wait and env are, with the command in a process group and session of its own, its processes found in the process table; built and unit-tested, not yet run on macOS"
)

// supportedHere are the commands that work on macOS so far. Every other
// command says so instead of acting on machinery this system lacks.
var supportedHere = map[string]bool{
	"run": true, "reap": true, "start": true, "ls": true, "status": true, "stop": true, "logs": true, "wait": true, "env": true,
	"completion": true, "help": true,
}
