package cli

// runRecords is false on macOS: runs are not implemented there yet.
const runRecords = false

// systemName and supportedWhat word the refusal of the rest.
const (
	systemName    = "macOS"
	supportedWhat = "issue 14: process groups watched through kqueue; tether builds here, and nothing runs yet"
)

// supportedHere are the commands that work on macOS so far: none but
// help. Every other command says so instead of acting on machinery this
// system lacks (reap printed an empty table and exited 0).
var supportedHere = map[string]bool{"completion": true, "help": true}
