package budget

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// Dir is file access to one cgroup directory. *cgroup.Leaf implements it
// through its held fd; PathDir by path.
type Dir interface {
	ReadFile(name string) (string, error)
	WriteFile(name, data string) error
	Has(name string) bool
}

// PathDir is a cgroup directory named by its path.
type PathDir string

// ReadFile reads name in the directory, trimmed.
func (d PathDir) ReadFile(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(string(d), name))
	return strings.TrimSpace(string(b)), err
}

// WriteFile writes data to name in the directory (which must exist).
func (d PathDir) WriteFile(name, data string) error {
	f, err := os.OpenFile(filepath.Join(string(d), name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", data, filepath.Join(string(d), name), err)
	}
	return nil
}

// Has reports whether name exists in the directory.
func (d PathDir) Has(name string) bool {
	_, err := os.Stat(filepath.Join(string(d), name))
	return err == nil
}

// Host is what Apply needs to know about the machine. Apply on Linux
// fills it from the real cgroupfs; tests pass directory trees.
type Host struct {
	// V2 is the run's v2 leaf, nil without one. V2Parents are the leaf's
	// ancestors, nearest first, up to the hierarchy's root.
	V2        Dir
	V2Parents []string
	// NewV1 creates a v1 leaf for a controller and returns it with its
	// ancestors, nearest first; nil on hosts without v1 controllers.
	NewV1 func(controller string) (Dir, []string, error)
	// SwapTotal is the host's swap size in bytes (/proc/meminfo).
	SwapTotal int64
}

// controller of each limit, and the v2 file that proves it is enabled.
var controllerOf = map[string]string{"memory": "memory", "memory_high": "memory", "swap": "memory", "cpus": "cpu", "pids": "pids"}
var v2Probe = map[string]string{"memory": "memory.max", "cpu": "cpu.max", "pids": "pids.max"}

// Budget is a spec applied to a run's cgroups.
type Budget struct {
	rec     receipt.Limits
	backend map[string]string // controller → "v2" or "v1"
	dirs    map[string]Dir    // controller → where its files are
	v1      map[string]Dir    // v1 leaves created, by controller
	// enabled are the controllers ApplyTo enabled in enabledIn, the v2
	// leaf's parent, for Restore to disable again.
	enabled   []string
	enabledIn PathDir
}

// Receipt returns what was applied and, after Outcome, what happened.
func (b *Budget) Receipt() *receipt.Limits { r := b.rec; return &r }

// V1 returns the v1 leaves the command must be born in, by controller.
func (b *Budget) V1() map[string]Dir { return b.v1 }

// ApplyTo writes spec into the cgroups host offers. Strict mode returns
// an error wrapping limits.ErrUnavailable for any limit it cannot apply; best
// effort records it in NotApplied. A limit above a parent's is always an
// error (limits.ErrAboveParent). On error, v1 leaves already created are in the
// returned Budget for the caller to remove (it may be nil otherwise).
func ApplyTo(spec limits.Spec, host Host, bestEffort bool) (*Budget, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	b := &Budget{backend: map[string]string{}, dirs: map[string]Dir{}, v1: map[string]Dir{}}
	b.rec.Mode = "strict"
	if bestEffort {
		b.rec.Mode = "best-effort"
	}
	a := &applier{b: b, host: host, spec: spec, v1Parents: map[string][]string{}, why: map[string]string{}}
	for _, l := range requests(a.spec) {
		if err := a.apply(l.name, l.value, l.shown); err != nil {
			if errors.Is(err, limits.ErrUnavailable) && bestEffort {
				b.rec.NotApplied = append(b.rec.NotApplied, receipt.LimitUnset{Name: l.name, Requested: l.shown, Reason: err.Error()})
				continue
			}
			return b, err
		}
	}
	return b, nil
}

type request struct {
	name  string
	value int64 // bytes, quota in µs for cpus, count for pids
	shown string
}

type applier struct {
	b         *Budget
	host      Host
	spec      limits.Spec
	v1Parents map[string][]string
	why       map[string]string // controller → why it is unavailable
}

// requests lists the limits spec sets, in the order they are applied,
// each as requested.
func requests(s limits.Spec) []request {
	var r []request
	if s.Memory > 0 {
		r = append(r, request{"memory", s.Memory, limits.FormatSize(s.Memory)})
	}
	if s.MemoryHigh > 0 {
		r = append(r, request{"memory_high", s.MemoryHigh, limits.FormatSize(s.MemoryHigh)})
	}
	if s.SwapSet {
		r = append(r, request{"swap", s.Swap, limits.FormatSize(s.Swap)})
	}
	if s.CPUs > 0 {
		r = append(r, request{"cpus", s.Quota(), strconv.FormatFloat(s.CPUs, 'f', -1, 64)})
	}
	if s.Pids > 0 {
		r = append(r, request{"pids", s.Pids, strconv.FormatInt(s.Pids, 10)})
	}
	return r
}

// dir finds where a controller's files are: the v2 leaf when the controller
// is enabled for it (enabling it in the parent if the parent offers it),
// else a fresh v1 leaf.
func (a *applier) dir(ctrl string) (string, Dir, error) {
	if d, ok := a.b.dirs[ctrl]; ok {
		return a.b.backend[ctrl], d, nil
	}
	if why, ok := a.why[ctrl]; ok {
		return "", nil, fmt.Errorf("%w: %s", limits.ErrUnavailable, why)
	}
	var reasons []string
	if a.host.V2 != nil {
		if a.host.V2.Has(v2Probe[ctrl]) {
			a.b.backend[ctrl], a.b.dirs[ctrl] = "v2", a.host.V2
			return "v2", a.host.V2, nil
		}
		reasons = append(reasons, a.enableV2(ctrl))
		if a.host.V2.Has(v2Probe[ctrl]) {
			a.b.backend[ctrl], a.b.dirs[ctrl] = "v2", a.host.V2
			return "v2", a.host.V2, nil
		}
	} else {
		reasons = append(reasons, "no cgroup v2 leaf (fallback mechanism)")
	}
	if a.host.NewV1 != nil {
		d, parents, err := a.host.NewV1(ctrl)
		if err == nil {
			a.b.backend[ctrl], a.b.dirs[ctrl], a.b.v1[ctrl] = "v1", d, d
			a.v1Parents[ctrl] = parents
			return "v1", d, nil
		}
		reasons = append(reasons, "cgroup v1: "+err.Error())
	}
	a.why[ctrl] = fmt.Sprintf("the %s controller is not available: %s; run `tether doctor` for what this host offers", ctrl, strings.Join(reasons, "; "))
	return "", nil, fmt.Errorf("%w: %s", limits.ErrUnavailable, a.why[ctrl])
}

// enableV2 tries to enable ctrl for the leaf's parent and says why it
// could not.
func (a *applier) enableV2(ctrl string) string {
	if len(a.host.V2Parents) == 0 {
		return "cgroup v2: no parent"
	}
	parent := PathDir(a.host.V2Parents[0])
	avail, _ := parent.ReadFile("cgroup.controllers")
	if !hasWord(avail, ctrl) {
		return fmt.Sprintf("cgroup v2: %s does not offer it (cgroup.controllers: %q)", parent, avail)
	}
	if why := populated(parent, len(a.host.V2Parents) == 1); why != "" {
		return "cgroup v2: " + why
	}
	if err := parent.WriteFile("cgroup.subtree_control", "+"+ctrl); err != nil {
		return fmt.Sprintf("cgroup v2: cannot enable it in %s/cgroup.subtree_control (a cgroup with processes of its own cannot; give tether an empty delegated parent with --cgroup-parent): %v", parent, err)
	}
	a.b.enabled = append(a.b.enabled, ctrl)
	a.b.enabledIn = parent
	return ""
}

// populated says why controllers must not be enabled in dir, or "". The
// kernel refuses domain controllers (memory, io) in a cgroup with
// processes of its own, but accepts threaded ones (pids, cpu, cpuset) and
// turns the cgroup "domain threaded": its new children are then invalid
// and every later start into them fails (EOPNOTSUPP), also for other
// programs. So tether never enables any controller there. The root is
// exempt from the rule.
func populated(dir PathDir, root bool) string {
	if root {
		return ""
	}
	if t, err := dir.ReadFile("cgroup.type"); err == nil && t != "domain" {
		return fmt.Sprintf("%s is of type %q, not \"domain\": tether enables controllers only in a plain domain cgroup", dir, t)
	}
	procs, err := dir.ReadFile("cgroup.procs")
	if err != nil {
		return fmt.Sprintf("cannot read %s/cgroup.procs: %v", dir, err)
	}
	if n := len(strings.Fields(procs)); n > 0 {
		return fmt.Sprintf("%s holds %d processes of its own, and a controller may be enabled for children only in a cgroup without processes (tether never does it there: pids or cpu would turn it \"domain threaded\" and break later starts); give tether an empty delegated parent (--cgroup-parent), or under systemd let tether take a scope of its own", dir, n)
	}
	return ""
}

// Restore disables the controllers ApplyTo enabled in the leaf's parent,
// once the parent has no child cgroup left (another run's leaf may still
// use them), so the parent is left as it was found. Call it after the
// leaf is removed.
func (b *Budget) Restore() error {
	if b == nil || len(b.enabled) == 0 {
		return nil
	}
	ents, err := os.ReadDir(string(b.enabledIn))
	if err != nil {
		return fmt.Errorf("limits: restore %s: %w", b.enabledIn, err)
	}
	for _, e := range ents {
		if e.IsDir() {
			return nil
		}
	}
	var errs []error
	for _, c := range b.enabled {
		errs = append(errs, b.enabledIn.WriteFile("cgroup.subtree_control", "-"+c))
	}
	b.enabled = nil
	return errors.Join(errs...)
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

func (a *applier) apply(name string, value int64, shown string) error {
	ctrl := controllerOf[name]
	if name == "swap" && value == 0 && a.host.SwapTotal == 0 {
		// Nothing can swap on a host without swap; say so rather than
		// fail for want of a swap controller file.
		a.b.rec.Applied = append(a.b.rec.Applied, receipt.LimitSet{Name: name, Requested: shown, Backend: "host", Note: "the host has no swap (SwapTotal 0 in /proc/meminfo)"})
		return nil
	}
	kind, d, err := a.dir(ctrl)
	if err != nil {
		return err
	}
	parents := a.host.V2Parents
	if kind == "v1" {
		parents = a.v1Parents[ctrl]
	}
	files, err := a.files(kind, name, value, d)
	if err != nil {
		return err
	}
	if err := checkParents(kind, name, value, shown, parents); err != nil {
		return err
	}
	for _, f := range files {
		if err := d.WriteFile(f.name, f.data); err != nil {
			return fmt.Errorf("limits: %s %s: %w", name, shown, err)
		}
	}
	last := files[len(files)-1]
	back, err := d.ReadFile(last.name)
	if err != nil {
		return fmt.Errorf("limits: read back %s: %w", last.name, err)
	}
	a.b.rec.Applied = append(a.b.rec.Applied, receipt.LimitSet{Name: name, Requested: shown, Backend: kind, File: where(d, last.name), Written: last.data, ReadBack: back})
	return nil
}

type write struct{ name, data string }

// files returns the writes that set a limit, in order.
func (a *applier) files(kind, name string, v int64, d Dir) ([]write, error) {
	n := strconv.FormatInt(v, 10)
	if kind == "v2" {
		switch name {
		case "memory":
			return []write{{"memory.max", n}}, nil
		case "memory_high":
			return []write{{"memory.high", n}}, nil
		case "swap":
			if !d.Has("memory.swap.max") {
				return nil, fmt.Errorf("%w: swap: memory.swap.max is missing (swap accounting is off)", limits.ErrUnavailable)
			}
			return []write{{"memory.swap.max", n}}, nil
		case "cpus":
			return []write{{"cpu.max", fmt.Sprintf("%d %d", v, limits.CPUPeriod)}}, nil
		case "pids":
			return []write{{"pids.max", n}}, nil
		}
	}
	switch name {
	case "memory":
		return []write{{"memory.limit_in_bytes", n}}, nil
	case "memory_high":
		return nil, fmt.Errorf("%w: memory_high: cgroup v1 has no memory.high (throttling) limit", limits.ErrUnavailable)
	case "swap":
		if !d.Has("memory.memsw.limit_in_bytes") {
			return nil, fmt.Errorf("%w: swap: memory.memsw.limit_in_bytes is missing (swap accounting is off)", limits.ErrUnavailable)
		}
		if a.spec.Memory == 0 {
			return nil, fmt.Errorf("%w: swap: on cgroup v1 a swap limit needs --memory (memsw limits memory+swap)", limits.ErrSyntax)
		}
		return []write{{"memory.memsw.limit_in_bytes", strconv.FormatInt(a.spec.Memory+v, 10)}}, nil
	case "cpus":
		return []write{{"cpu.cfs_period_us", strconv.Itoa(limits.CPUPeriod)}, {"cpu.cfs_quota_us", n}}, nil
	case "pids":
		return []write{{"pids.max", n}}, nil
	}
	return nil, fmt.Errorf("limits: unknown limit %q", name)
}

func where(d Dir, file string) string {
	if p, ok := d.(interface{ FilePath(string) string }); ok {
		return p.FilePath(file)
	}
	if p, ok := d.(PathDir); ok {
		return filepath.Join(string(p), file)
	}
	return file
}

// FilePath returns the path of file in the directory.
func (d PathDir) FilePath(file string) string { return filepath.Join(string(d), file) }

// V1Dirs returns the directories of the v1 leaves the command must be born
// in, by controller.
func (b *Budget) V1Dirs() map[string]string {
	out := map[string]string{}
	for c, d := range b.v1 {
		out[c] = filepath.Dir(where(d, "tasks"))
	}
	return out
}
