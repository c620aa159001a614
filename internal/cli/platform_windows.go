package cli

// runRecords is false on Windows: a run's Job Object dies with tether
// (KILL_ON_JOB_CLOSE), so there is nothing for reap to recover.
const runRecords = false

// systemName and supportedWhat word the refusal of the rest.
const (
	systemName    = "Windows"
	supportedWhat = "tether run, doctor and the session commands start, ls, status, stop, logs, wait, exec, env and reap are"
)

// supportedHere are the commands that work on Windows so far (issue 14);
// the rest refuse with a clear message rather than act on Linux-only
// machinery.
var supportedHere = map[string]bool{
	"run": true, "doctor": true, "start": true, "ls": true, "status": true, "stop": true, "logs": true, "wait": true, "exec": true, "reap": true, "env": true,
	"completion": true, "help": true,
}
