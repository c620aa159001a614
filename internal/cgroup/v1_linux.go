package cgroup

import (
	"fmt"
	"sync"

	"github.com/tether-run/tether/internal/procfs"
)

// V1Mounts returns the mount point of each mounted cgroup v1 controller,
// read once from /proc/self/mountinfo. It is empty on a pure v2 host.
func V1Mounts() map[string]string { return v1Mounts() }

var v1Mounts = sync.OnceValue(func() map[string]string {
	b, err := mountinfo()
	if err != nil {
		return map[string]string{}
	}
	return ParseV1Mounts(b)
})

// SelfV1 returns pid's path in each v1 hierarchy (0 for the caller).
func SelfV1(pid int) (map[string]string, error) {
	p := "/proc/self/cgroup"
	if pid > 0 {
		p = fmt.Sprintf("/proc/%d/cgroup", pid)
	}
	b, err := procfs.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return ParseProcCgroupV1(b), nil
}
