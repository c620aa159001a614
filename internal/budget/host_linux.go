package budget

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/procfs"
	"github.com/tether-run/tether/limits"
)

// Apply writes spec into the run's cgroups on this host: the v2 leaf
// (nil for the fallback mechanism) where a controller is enabled for it,
// else fresh v1 leaves under the caller's own v1 cgroups. See ApplyTo.
func Apply(spec limits.Spec, leaf *cgroup.Leaf, bestEffort bool) (*Budget, error) {
	host := Host{SwapTotal: swapTotal()}
	if leaf != nil {
		host.V2 = leaf
		if m, err := cgroup.Mount(); err == nil {
			host.V2Parents = ancestors(leaf.Parent, m)
		}
	}
	if len(cgroup.V1Mounts()) > 0 {
		host.NewV1 = func(ctrl string) (Dir, []string, error) {
			l, err := cgroup.CreateV1(ctrl)
			if err != nil {
				return nil, nil, err
			}
			return l, ancestors(l.Parent, cgroup.V1Mounts()[ctrl]), nil
		}
	}
	return ApplyTo(spec, host, bestEffort)
}

// ancestors lists dir and its parents up to and including root.
func ancestors(dir, root string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		out = append(out, d)
		if d == filepath.Clean(root) || d == "/" || !strings.HasPrefix(d, filepath.Clean(root)) {
			return out
		}
	}
}

func swapTotal() int64 {
	b, err := procfs.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SwapTotal:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return -1
}
