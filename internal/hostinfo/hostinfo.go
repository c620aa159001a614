// Package hostinfo finds out what containment this host offers tether: the
// cgroup mode and mounts, our own cgroup and whether it is delegated to us,
// which controllers are available in which hierarchy, and the kernel
// features tether relies on (pidfd_open, PIDFD_GET_INFO, clone3 with
// CLONE_INTO_CGROUP, cgroup.kill, the child subreaper). Features are probed
// by using them, never guessed from the kernel version. From the findings it
// derives the mechanism `tether run` would pick and concrete advice.
//
// The probe changes nothing it does not undo: the clone3 probe creates one
// fresh leaf, starts /bin/true into it, reaps it and removes the leaf.
package hostinfo

// SchemaVersion is the version of the Report format. It changes when a
// field is removed or changes meaning.
const SchemaVersion = 1

// Cgroup modes (Cgroup.Mode).
const (
	ModeUnified = "unified" // cgroup v2 only
	ModeHybrid  = "hybrid"  // cgroup v2 beside v1 controllers
	ModeLegacy  = "legacy"  // cgroup v1 controllers only
	ModeNone    = "none"    // no cgroup filesystem at all
)

// Where a limit would be enforced (Limit.Where).
const (
	WhereV2          = "v2"
	WhereV1          = "v1"
	WhereUnavailable = "unavailable"
	WhereJob         = "job" // Windows: the run's Job Object
)

// Mechanisms `tether run` would pick by default (Mechanism.Default).
const (
	MechanismCgroup   = "cgroup"
	MechanismFallback = "fallback"
	// MechanismError: tether run would fail to start, because the given
	// cgroup parent cannot be used (it never silently falls back from a
	// parent it was given), or starting into the leaf is refused.
	MechanismError = "error"
	// MechanismJobObject: Windows, a Job Object the command is created in.
	MechanismJobObject = "job-object"
)

// Parent sources (LeafParent.Source) other than a caller's own label.
const SourceOwn = "own cgroup"

// LimitControllers are the controllers tether can use for limits, in the
// order they are reported.
var LimitControllers = []string{"memory", "pids", "cpu"}

// delegationFiles are the files a delegatee must own besides the directory
// (cgroup-v2.rst, "Delegation Containment"): with them it may create
// children, move its processes between them and enable controllers for
// them, but not change the limits set on the delegated cgroup itself.
var delegationFiles = []string{"cgroup.procs", "cgroup.subtree_control", "cgroup.threads"}

// Options adjusts what Probe examines.
type Options struct {
	// CgroupParent is the cgroup v2 directory leaves would go in, as given
	// to tether run with --cgroup-parent or $TETHER_CGROUP_PARENT. Empty
	// means our own cgroup, tether run's default.
	CgroupParent string
	// ParentSource names where CgroupParent came from, for the report
	// ("--cgroup-parent", "TETHER_CGROUP_PARENT").
	ParentSource string
	// RuntimeDir is $XDG_RUNTIME_DIR, where a user systemd instance keeps
	// its sockets ("systemd" below it).
	RuntimeDir string
}

// Report is what Probe found. Lists are never nil.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	OS            string `json:"os"`
	// Supported is false where tether's containment is not implemented
	// (every OS but Linux); the rest of the report is then empty.
	Supported bool      `json:"supported"`
	Kernel    string    `json:"kernel"` // uname release
	UID       int       `json:"uid"`
	Cgroup    Cgroup    `json:"cgroup"`
	Limits    []Limit   `json:"limits"`
	Features  Features  `json:"features"`
	Systemd   Systemd   `json:"systemd"`
	Mechanism Mechanism `json:"mechanism"`
	// Job describes the Windows Job Object mechanism (Windows only).
	Job *Job `json:"job,omitempty"`
	// FullContainment is true when tether run would start commands
	// straight into a fresh cgroup leaf and could kill it with cgroup.kill
	// (on Windows: into a Job Object from their creation).
	FullContainment bool     `json:"full_containment"`
	Advice          []string `json:"advice"`
}

// Cgroup describes the cgroup hierarchies.
type Cgroup struct {
	Mode string         `json:"mode"` // ModeUnified, ModeHybrid, ModeLegacy or ModeNone
	V2   V2             `json:"v2"`
	V1   []V1Controller `json:"v1"` // sorted by controller name
}

// V2 describes the cgroup v2 hierarchy and our place in it. Everything but
// Error is empty when no v2 hierarchy is mounted.
type V2 struct {
	Mount string `json:"mount"`
	Path  string `json:"path"` // our cgroup, relative to Mount ("/" is the root)
	Dir   string `json:"dir"`  // our cgroup's directory
	// RootControllers is cgroup.controllers of the root: the controllers
	// bound to v2 at all.
	RootControllers []string `json:"root_controllers"`
	// ParentControllers is cgroup.controllers of the cgroup above ours
	// (empty when ours is the root).
	ParentControllers []string `json:"parent_controllers"`
	// Controllers and SubtreeControl are those files of our cgroup: what
	// we were given, and what our children get.
	Controllers    []string   `json:"controllers"`
	SubtreeControl []string   `json:"subtree_control"`
	LeafParent     LeafParent `json:"leaf_parent"`
	Error          string     `json:"error,omitempty"` // why the hierarchy could not be read
}

// LeafParent is the directory tether run would create its leaves in.
type LeafParent struct {
	Dir    string `json:"dir"`
	Source string `json:"source"` // SourceOwn, or Options.ParentSource
	// Usable reports whether cgroup.CheckParent accepts Dir; Why says why
	// not.
	Usable         bool     `json:"usable"`
	Why            string   `json:"why,omitempty"`
	Controllers    []string `json:"controllers"`
	SubtreeControl []string `json:"subtree_control"`
	// SubtreeControlWritable and OwnProcesses decide whether tether can
	// enable a controller for its leaves: the kernel refuses while a
	// cgroup other than the root has processes of its own.
	SubtreeControlWritable bool       `json:"subtree_control_writable"`
	OwnProcesses           int        `json:"own_processes"`
	Delegation             Delegation `json:"delegation"`
	// ContainsUs reports whether our cgroup is Dir or below it. The kernel
	// lets a process start children into a cgroup only when it may write
	// cgroup.procs of the common ancestor of its own cgroup and the target.
	ContainsUs bool `json:"contains_us"`
}

// Delegation says whether a cgroup directory is delegated to our uid: the
// directory and its cgroup.procs, cgroup.subtree_control and
// cgroup.threads are owned by it (cgroup-v2.rst, "Delegation").
type Delegation struct {
	Delegated bool `json:"delegated"`
	// Proof is how delegation was proven (delegate.Proof: own-scope,
	// systemd-xattr, user-xattr, unit-property, no-manager, named), ""
	// when it was not; Detail says what that proof establishes.
	Proof  string  `json:"proof"`
	Detail string  `json:"detail"`
	Owners []Owner `json:"owners"`
}

// Owner is the owner of one file of a delegation.
type Owner struct {
	File  string `json:"file"` // "." for the directory itself
	UID   int    `json:"uid"`  // -1 when it could not be read
	Error string `json:"error,omitempty"`
}

// V1Controller is one mounted cgroup v1 controller and our place in it.
type V1Controller struct {
	Name     string `json:"name"`
	Mount    string `json:"mount"`
	Path     string `json:"path"` // ours, relative to Mount ("" if unknown)
	Dir      string `json:"dir"`  // our cgroup's directory in this hierarchy
	Writable bool   `json:"writable"`
	Why      string `json:"why,omitempty"` // why it is not writable, or our path is unknown
}

// Limit says where a limit on one controller would be enforced.
type Limit struct {
	Controller string `json:"controller"`
	Where      string `json:"where"` // WhereV2, WhereV1 or WhereUnavailable
	Dir        string `json:"dir"`   // where the limited leaves would go; "" when unavailable
	Why        string `json:"why"`
}

// Features are the kernel features tether uses, each probed by using it.
type Features struct {
	// PidfdOpen: pidfd_open(2) on ourselves (Linux 5.3).
	PidfdOpen Feature `json:"pidfd_open"`
	// PidfdCgroupID: the PIDFD_GET_INFO ioctl reporting a cgroup id
	// (Linux 6.13); without it placement is checked in /proc/PID/cgroup.
	PidfdCgroupID Feature `json:"pidfd_info_cgroup_id"`
	// Clone3IntoCgroup: clone3 with CLONE_INTO_CGROUP (Linux 5.7), tried
	// by starting /bin/true into a fresh leaf of the leaf parent.
	Clone3IntoCgroup Feature `json:"clone3_into_cgroup"`
	// CgroupKill: the cgroup.kill file (Linux 5.14).
	CgroupKill Feature `json:"cgroup_kill"`
	// ChildSubreaper: prctl PR_GET_CHILD_SUBREAPER (Linux 3.4).
	ChildSubreaper Feature `json:"child_subreaper"`
}

// Feature is the outcome of one probe.
type Feature struct {
	Available bool   `json:"available"`
	Probed    bool   `json:"probed"` // false when the probe could not be tried
	Detail    string `json:"detail"` // what was seen, or why it was not probed
}

// Job is what Windows offers tether's Job Objects, each probed by using
// it.
type Job struct {
	// Windows is the version RtlGetVersion reports (Wine's: the version
	// it pretends to be).
	Windows string `json:"windows"`
	// Wine is Wine's version when this runs under Wine, which keeps no
	// job limits.
	Wine string `json:"wine,omitempty"`
	// InJob is true when tether itself runs in a job (a CI runner's, a
	// service's, a terminal's).
	InJob bool `json:"in_job"`
	// CreateInJob: a process created in a fresh job
	// (PROC_THREAD_ATTRIBUTE_JOB_LIST) and its stop confirmed, tried by
	// a contained run of cmd /c exit 0.
	CreateInJob Feature `json:"create_in_job"`
	// Breakaway: a child may be created out of tether's job
	// (CREATE_BREAKAWAY_FROM_JOB); without it a session started here is
	// bound to that job and ends with it.
	Breakaway Feature `json:"breakaway"`
}

// Systemd says whether the systemd way of delegation looks possible.
type Systemd struct {
	// Booted is true when the host was booted with systemd, whose
	// manager then owns the cgroup tree.
	Booted bool `json:"booted"`
	// Manager is the manager tether asks for a scope ("system" for root,
	// else "user"); ManagerReachable says whether its private socket
	// answers to us, ManagerError why not.
	Manager          string `json:"manager,omitempty"`
	ManagerReachable bool   `json:"manager_reachable"`
	ManagerError     string `json:"manager_error,omitempty"`
	// ScopeControllers are the controllers a scope from that manager
	// would offer tether's leaves.
	ScopeControllers []string `json:"scope_controllers"`
	// UserManager is true when $XDG_RUNTIME_DIR/systemd exists.
	UserManager bool   `json:"user_manager"`
	SystemdRun  string `json:"systemd_run"` // path of systemd-run, "" if not found
}

// Mechanism is the containment tether run would pick without
// --mechanism, and why.
type Mechanism struct {
	Default string `json:"default"`
	Why     string `json:"why"`
}

// Probe examines the host as tether run would see it by default.
func Probe() (Report, error) { return ProbeWith(Options{}) }

// ProbeWith examines the host for the given options. The report is
// complete even when the host lacks features; the error is non-nil only
// when probing failed in a way that may have left something behind (a
// probe leaf it could not remove). On systems other than Linux it returns
// a report saying so and errors.ErrUnsupported.
func ProbeWith(o Options) (Report, error) { return probe(o) }

// newReport returns a report with every list empty, not nil.
func newReport(os string) Report {
	return Report{
		SchemaVersion: SchemaVersion,
		OS:            os,
		UID:           -1,
		Cgroup: Cgroup{
			Mode: ModeNone,
			V1:   []V1Controller{},
			V2: V2{
				RootControllers:   []string{},
				ParentControllers: []string{},
				Controllers:       []string{},
				SubtreeControl:    []string{},
				LeafParent: LeafParent{
					Controllers:    []string{},
					SubtreeControl: []string{},
					Delegation:     Delegation{Owners: []Owner{}},
				},
			},
		},
		Systemd: Systemd{ScopeControllers: []string{}},
		Limits:  []Limit{},
		Advice:  []string{},
	}
}
