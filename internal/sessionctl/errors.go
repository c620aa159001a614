package sessionctl

import "errors"

// The errors a session's client and its supervisor share; package session
// exports the same values.
var (
	// ErrOwner is returned when the owner cannot be resolved or is dead.
	ErrOwner = errors.New("session: owner")
	// ErrUnsupervised is returned when acting on a session whose
	// supervisor is gone; `tether reap` reclaims such sessions.
	ErrUnsupervised = errors.New("session: unsupervised")
	// ErrSupervisor is returned when the supervisor failed before it
	// could report.
	ErrSupervisor = errors.New("session: supervisor failed")
	// ErrStarting is returned when stopping a session whose supervisor
	// has not recorded itself yet; try again once its start has returned.
	ErrStarting = errors.New("session: still starting")
	// ErrStillStopping is returned by StopMany when the wait for a
	// supervisor ended (deadline, or the caller gave up) before the stop:
	// the supervisor goes on with it, and `tether wait` can follow it.
	ErrStillStopping = errors.New("session: still stopping")
	// ErrBadOptions is wrapped when a session's options are malformed (an
	// unknown Until or Profile, an owner spec of no known form): the
	// caller's mistake, nothing was created.
	ErrBadOptions = errors.New("session: bad options")
)

// Until policies: when a session ends by itself.
const (
	UntilMainExit = "main-exit" // the main process exits: what is left is stopped
	UntilEmpty    = "empty"     // the group is empty (for commands that daemonize)
)
