//go:build !windows && !darwin

package cli

// runRecords says that runs keep a registry record, so that tether reap
// can recover a run whose tether died.
const runRecords = true

// supportedHere is nil: every command is implemented here (or says
// itself what this system lacks).
var supportedHere map[string]bool

// systemName and supportedWhat are not used where every command is.
const systemName, supportedWhat = "", ""
