// Package delegate finds, or obtains from systemd, a cgroup v2 subtree that
// this process may write by the rules of the manager that owns it.
//
// On a host booted with systemd, the manager owns the cgroup tree: only a
// cgroup it delegated (Delegate=yes) may be written by anyone else, and file
// ownership is not delegation (everything below user@UID.service belongs to
// the user, delegated or not). Check proves delegation the way systemd
// marks it: the system manager sets the trusted.delegate and user.delegate
// extended attributes on what it delegates; the user manager sets none, so
// for its units the Delegate property is asked over D-Bus. Only
// trusted.delegate (settable only with CAP_SYS_ADMIN) and the manager's
// answer prove a delegation; a user.* attribute can be set by the
// cgroup's owner, so user.delegate, and the user.tether.scope mark
// EnterScope leaves, count only on a cgroup of root's or the caller's and
// prove only that one of them set it (Proof says which). EnterScope gets a
// delegated cgroup the way systemd intends: a transient scope with
// Delegate=yes (StartTransientUnit), as runc's systemd driver and tmux do.
//
// On a host without systemd, the kernel's permissions are the only rule: a
// cgroup this user may write is ours to write.
package delegate

import "errors"

var (
	// ErrNotDelegated is returned by Check for a cgroup that its manager
	// did not delegate to this process. Do not write in it: obtain a scope
	// with EnterScope, or name a delegated parent.
	ErrNotDelegated = errors.New("delegate: cgroup is not delegated to us")
	// ErrNoManager is returned by EnterScope when no systemd manager can be
	// reached for this user (no systemd, or no user manager running).
	ErrNoManager = errors.New("delegate: no systemd manager to ask for a scope")
	// ErrBusy is noted by Prepare when our delegated cgroup holds other
	// processes: moving ourselves out would not make it empty.
	ErrBusy = errors.New("delegate: cgroup holds other processes")
)

// Proof says how a cgroup was shown to be ours to write. The proofs do
// not all prove the same thing: only trusted.delegate and the manager's
// answer show that a manager delegated the cgroup; a user.* mark shows
// only that root or the caller set it (see ProofUserXattr).
type Proof string

// Proofs, in the order Check tries them.
const (
	// ProofOwnScope: the unit's cgroup carries user.tether.scope naming
	// the unit, the mark EnterScope sets on a scope it got from systemd
	// with Delegate=yes. The cgroup's owner can set a user.* attribute
	// too, so Check accepts it only on a cgroup of root's or the
	// caller's, and it proves only that root or the caller marked it.
	ProofOwnScope Proof = "own-scope"
	// ProofXattr: trusted.delegate = "1" on the unit's cgroup. Only a
	// process with CAP_SYS_ADMIN can set a trusted.* attribute (or read
	// one, so only root finds this proof): the system manager's mark of
	// what it delegates.
	ProofXattr Proof = "systemd-xattr"
	// ProofUserXattr: user.delegate = "1" on the unit's cgroup, with no
	// trusted.delegate to be read (another user than root cannot read
	// it). The system manager sets it beside trusted.delegate so that
	// users can read it, but the cgroup's owner can set it too, delegated
	// or not: Check accepts it only on a cgroup of root's or the
	// caller's, and it proves only that root or the caller marked it
	// (same-user ownership), not that a manager delegated the cgroup.
	ProofUserXattr Proof = "user-xattr"
	// ProofUnitProperty: the unit's Delegate property, asked over D-Bus (the
	// user manager marks nothing on disk).
	ProofUnitProperty Proof = "unit-property"
	// ProofNoManager: the host was not booted with systemd; permission to
	// write is the only rule.
	ProofNoManager Proof = "no-manager"
	// ProofNamed: the caller named the parent (--cgroup-parent): its
	// delegation is the caller's word.
	ProofNamed Proof = "named"
)

// Establishes says what p establishes about a cgroup, and what it does
// not, in a clause for a report such as tether doctor's.
func (p Proof) Establishes() string {
	const owners = "the cgroup's owner can set a user.* attribute too, so this proves only that root or you marked a cgroup of root's or yours, not that a manager delegated it"
	switch p {
	case ProofOwnScope:
		return "its unit carries user.tether.scope naming it, tether's mark on a scope it got from systemd with Delegate=yes; " + owners
	case ProofXattr:
		return "its unit carries trusted.delegate=1, which only a process with CAP_SYS_ADMIN can set: the system manager's mark of a unit it delegated"
	case ProofUserXattr:
		return "its unit carries user.delegate=1 and no trusted.delegate this process can read (only CAP_SYS_ADMIN can set or read one); the system manager sets both on what it delegates, but " + owners
	case ProofUnitProperty:
		return "its unit's manager, asked over D-Bus, says the unit has Delegate=yes"
	case ProofNoManager:
		return "the host was not booted with systemd: write permission is the only rule"
	case ProofNamed:
		return "the caller named it: its delegation is the caller's word"
	}
	return "not proven"
}

// Manager names a systemd instance.
type Manager string

// Managers.
const (
	ManagerSystem Manager = "system"
	ManagerUser   Manager = "user"
)

// Scope is a transient systemd scope with Delegate=yes that this process
// entered. Leaves go in Dir. Unless Options.StayInRoot, Dir holds no
// process (the process sits in Dir/supervisor), so controllers can be
// enabled for the leaves.
type Scope struct {
	Unit    string  `json:"unit"`
	Dir     string  `json:"dir"`
	Manager Manager `json:"manager"`
	// PartOf is the unit the caller ran in, when the scope was bound to it:
	// stopping that unit stops the scope.
	PartOf string `json:"part_of,omitempty"`
}

// Options shape the scope EnterScope asks for.
type Options struct {
	// Description is the unit's description (shown by systemctl status).
	Description string
	// PartOf binds the scope to the unit the caller runs in, so that
	// stopping the caller's unit stops the scope too (what `tether run`
	// wants); sessions leave it false to outlive their caller.
	PartOf bool
	// StayInRoot leaves the process in the scope's own cgroup instead of
	// moving it on into the supervisor child: one cgroup migration fewer
	// (moving a multi-threaded process waits for an RCU grace period),
	// but the scope then holds a process, so no controller can be enabled
	// for its leaves. For runs without limits.
	StayInRoot bool
}

// SupervisorDir is the name of the child cgroup that EnterScope and
// Prepare move the calling process into.
const SupervisorDir = "supervisor"

// Home is where a run's leaves go, and how that place was proven ours.
type Home struct {
	Dir   string `json:"dir"`
	Proof Proof  `json:"proof"`
	// Scope is set when the process entered a scope of its own for it.
	Scope *Scope `json:"scope,omitempty"`
	// Moved is set when the process moved itself into Dir/supervisor to
	// free Dir for controllers.
	Moved bool `json:"moved,omitempty"`
	// Note says why a weaker home was taken (no scope could be had).
	Note string `json:"note,omitempty"`
}

// PrepareOptions say what a run needs of its home.
type PrepareOptions struct {
	// Limits: the run's leaves need controllers enabled, which the kernel
	// allows only in a cgroup without processes of its own.
	Limits bool
	// OwnScope: under systemd, always take a scope of our own (a session
	// must outlive the unit its caller runs in).
	OwnScope bool
	// Scope shapes the scope, when one is asked for.
	Scope Options
}
