package cgroup

import (
	"path/filepath"
	"strings"
)

// V1Controllers returns the cgroup v1 controllers tether can use for
// limits on hybrid hosts, where they are not bound to the v2 hierarchy.
func V1Controllers() []string { return []string{"memory", "pids", "cpu"} }

// knownV1 are the v1 controller names; other super options of a cgroup
// mount (rw, xattr, name=..., noprefix, ...) are mount options.
var knownV1 = map[string]bool{
	"cpuset": true, "cpu": true, "cpuacct": true, "blkio": true, "memory": true,
	"devices": true, "freezer": true, "net_cls": true, "perf_event": true,
	"net_prio": true, "hugetlb": true, "pids": true, "rdma": true, "misc": true,
}

// ParseV1Mounts returns, for each cgroup v1 controller in the contents of
// /proc/PID/mountinfo, the mount point of its hierarchy.
func ParseV1Mounts(b []byte) map[string]string {
	out := map[string]string{}
	for _, m := range mounts(b) {
		if m.fstype != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(m.superOpts, ",") {
			if _, seen := out[opt]; knownV1[opt] && !seen {
				out[opt] = m.point
			}
		}
	}
	return out
}

// ParseProcCgroupV1 returns, for each v1 controller in the contents of
// /proc/PID/cgroup, the process's path in that hierarchy. Lines that name
// several controllers ("2:cpu,cpuacct:/x") give the path to each.
func ParseProcCgroupV1(b []byte) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		// A path tether joins to a mount must be absolute and clean.
		if len(parts) != 3 || parts[1] == "" || !filepath.IsAbs(parts[2]) || filepath.Clean(parts[2]) != parts[2] {
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c != "" && !strings.HasPrefix(c, "name=") {
				out[c] = parts[2]
			}
		}
	}
	return out
}
