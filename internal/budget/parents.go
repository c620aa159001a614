package budget

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tether-run/tether/limits"
)

// unlimitedV1 is where v1 reports "no limit" (PAGE_COUNTER_MAX pages).
const unlimitedV1 = int64(1) << 62

// parentFile is the file that bounds each limit in an ancestor.
func parentFile(kind, name string) string {
	switch kind + "/" + name {
	case "v2/memory", "v2/memory_high":
		return "memory.max"
	case "v2/swap":
		return "memory.swap.max"
	case "v2/cpus":
		return "cpu.max"
	case "v1/memory", "v1/memory_high":
		return "memory.limit_in_bytes"
	case "v1/cpus":
		return "cpu.cfs_quota_us"
	case "v2/pids", "v1/pids":
		return "pids.max"
	}
	return ""
}

// checkParents refuses a limit above what any ancestor allows.
func checkParents(kind, name string, value int64, shown string, parents []string) error {
	file := parentFile(kind, name)
	if file == "" {
		return nil
	}
	for _, p := range parents {
		limit, ok := parentLimit(PathDir(p), kind, file)
		if !ok || value <= limit {
			continue
		}
		have := limits.FormatSize(limit)
		switch name {
		case "cpus":
			have = strconv.FormatFloat(float64(limit)/limits.CPUPeriod, 'f', -1, 64) + " CPUs"
		case "pids":
			have = strconv.FormatInt(limit, 10)
		}
		return fmt.Errorf("%w: --%s %s is above the limit of %s set on %s", limits.ErrAboveParent, flagName(name), shown, have, filepath.Join(p, file))
	}
	return nil
}

// parentLimit reads an ancestor's bound; ok is false where it sets none.
// CPU bounds come back as a quota per limits.CPUPeriod.
func parentLimit(d PathDir, kind, file string) (int64, bool) {
	s, err := d.ReadFile(file)
	if err != nil || s == "" {
		return 0, false
	}
	switch file {
	case "cpu.max":
		f := strings.Fields(s)
		if len(f) != 2 || f[0] == "max" {
			return 0, false
		}
		q, err1 := strconv.ParseInt(f[0], 10, 64)
		per, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || per <= 0 {
			return 0, false
		}
		return q * limits.CPUPeriod / per, true
	case "cpu.cfs_quota_us":
		q, err := strconv.ParseInt(s, 10, 64)
		if err != nil || q < 0 {
			return 0, false
		}
		ps, _ := d.ReadFile("cpu.cfs_period_us")
		per, err := strconv.ParseInt(ps, 10, 64)
		if err != nil || per <= 0 {
			return 0, false
		}
		return q * limits.CPUPeriod / per, true
	}
	if s == "max" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || (kind == "v1" && n >= unlimitedV1) {
		return 0, false
	}
	return n, true
}

func flagName(limit string) string {
	return strings.ReplaceAll(limit, "_", "-")
}
