package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/delegate"
	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/receipt"
)

// fdDir lists this process's open descriptors.
const fdDir = "/proc/self/fd"

// enterScope moves the supervisor, under systemd, into a transient scope
// of its own with Delegate=yes before anything starts: the session then
// outlives the unit its caller ran in (systemd stops a unit's whole
// cgroup), and its leaves can have limits. Where no scope can be had the
// supervisor stays put and contain chooses as it would anywhere (its own
// cgroup when delegated, else the fallback), which the receipt records —
// except that it never stays inside another run's leaf (leaveLeaf).
func enterScope(spec *sessionctl.Spec, name string) error {
	if spec.CgroupParent != "" || spec.Mechanism == string(receipt.MechanismFallback) {
		return nil
	}
	if delegate.Booted() {
		delegate.Prepare(context.Background(), delegate.PrepareOptions{
			Limits: !spec.Limits.IsZero(), OwnScope: true,
			Scope: delegate.Options{Description: "tether session " + name},
		})
	}
	return leaveLeaf(spec.OwnerToken == "")
}

// leaveLeaf moves the supervisor out of the tether leaf it was started
// in (a session started inside `tether run` or inside another session,
// on a host without systemd or where no scope could be had), to the
// parent of the outermost such leaf: where that run made its leaf. Left
// there, its own leaf would be made inside the enclosing one, and the
// enclosing stop's cgroup.kill would kill the supervisor mid-stop,
// leaving its record "stopping" and two cgroups behind (issue 22, item
// 4). Moving needs write access to that parent's cgroup.procs, which
// whoever made a leaf there has. When the move fails, a session that
// must outlive its caller (no owner) is refused, saying why; one with an
// owner stays where it is (its owner's stop stops it first).
func leaveLeaf(ownerless bool) error {
	m, err := cgroup.Mount()
	if err != nil {
		return nil
	}
	self, err := cgroup.Self(0)
	if err != nil {
		return nil
	}
	parts := strings.Split(strings.Trim(self, "/"), "/")
	i := slices.IndexFunc(parts, cgroup.IsLeafName)
	if i < 0 {
		return nil
	}
	leaf := filepath.Join(m, filepath.Join(parts[:i+1]...))
	dest := filepath.Join(m, filepath.Join(parts[:i]...))
	werr := os.WriteFile(filepath.Join(dest, "cgroup.procs"), []byte("0"), 0)
	if werr == nil || !ownerless {
		return nil
	}
	return fmt.Errorf("started inside the tether leaf %s, whose stop would kill this session, and cannot leave it for %s: %v; start it outside, give --cgroup-parent, or give it an --owner",
		leaf, dest, werr)
}

// bindings are the caveats of a supervisor's session: none on Linux,
// where enterScope takes the session out of its caller's unit.
func bindings() []string { return nil }
