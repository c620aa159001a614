package cgroup

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzProcFiles feeds any bytes to the parsers of /proc/PID/mountinfo and
// /proc/PID/cgroup (v2 and v1): never a panic, and every path they return
// is absolute and clean, so that joining it to a mount point cannot leave
// the mount (issue 15).
func FuzzProcFiles(f *testing.F) {
	for _, s := range []string{
		"36 25 0:31 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n37 25 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
		"30 23 0:26 / /sys/fs/cgroup rw shared:4 - cgroup2 cgroup2 rw\n",
		"1 2 0:1 / /a\\040b rw - cgroup2 none rw\n",
		"1 2 0:1 / rel rw - cgroup2 none rw\n",
		"1 2 0:1 / /x\\\\ rw - cgroup cgroup rw,cpu,cpuacct\n",
		"0::/user.slice/session-1.scope\n", "0::/\n", "0::/a (deleted)\n", "0::relative\n", "0::/../../etc\n", "0::/a/./b\n",
		"12:memory:/x\n2:cpu,cpuacct:/y\n1:name=systemd:/z\n0::/w\n", "::::\n", "- - - - - - -\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		clean := func(what, p string) {
			if p != "" && (!filepath.IsAbs(p) || filepath.Clean(p) != p) {
				t.Errorf("%s = %q from %q: want an absolute clean path", what, p, b)
			}
		}
		clean("ParseMountinfo", ParseMountinfo(b))
		for c, p := range ParseV1Mounts(b) {
			clean("ParseV1Mounts["+c+"]", p)
		}
		if p, err := ParseProcCgroup(b); err == nil {
			if p == "" {
				t.Errorf("ParseProcCgroup(%q) = \"\" without an error", b)
			}
			clean("ParseProcCgroup", p)
		}
		for c, p := range ParseProcCgroupV1(b) {
			if c == "" || strings.HasPrefix(c, "name=") {
				t.Errorf("ParseProcCgroupV1(%q) has controller %q", b, c)
			}
			clean("ParseProcCgroupV1["+c+"]", p)
		}
	})
}

// FuzzCgroupFiles feeds any bytes to the parsers of the files tether reads
// in a leaf (cgroup.events, cgroup.procs, cpu.stat): never a panic, and
// cgroup.procs gives positive pids only.
func FuzzCgroupFiles(f *testing.F) {
	for _, s := range []string{
		"populated 1\nfrozen 0\n", "populated 0\n", "frozen 1\n", "populated\n", "",
		"1\n22\n333\n", "0\n", "-1\n", "99999999999999999999\n", " 7 \n\n8",
		"usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods 0\n", "usage_usec x\n", "usage_usec 18446744073709551616\n", "core_sched.force_idle_usec 0\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseEvents(b)
		ParseCPUStat(b)
		if pids, err := ParsePids(b); err == nil {
			for _, p := range pids {
				if p <= 0 {
					t.Errorf("ParsePids(%q) gave %d", b, p)
				}
			}
		}
	})
}
