package cgroup

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseMountinfo(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "hybrid",
			in: "35 25 0:30 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n" +
				"36 35 0:31 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw,nsdelegate\n" +
				"37 35 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			want: "/sys/fs/cgroup/unified",
		},
		{
			name: "pure v2",
			in:   "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw\n",
			want: "/sys/fs/cgroup",
		},
		{
			name: "escaped space",
			in:   "30 24 0:26 / /mnt/my\\040cg rw - cgroup2 none rw\n",
			want: "/mnt/my cg",
		},
		{name: "none", in: "37 35 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", want: ""},
		{name: "garbage", in: "x y z\n\n-\n", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ParseMountinfo([]byte(tt.in)); got != tt.want {
				t.Errorf("ParseMountinfo() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseProcCgroup(t *testing.T) {
	got, err := ParseProcCgroup([]byte("4:memory:/x\n0::/user.slice/a.scope\n"))
	if err != nil || got != "/user.slice/a.scope" {
		t.Errorf("ParseProcCgroup() = %q, %v, want /user.slice/a.scope", got, err)
	}
	if _, err := ParseProcCgroup([]byte("4:memory:/x\n")); !errors.Is(err, ErrNoV2) {
		t.Errorf("ParseProcCgroup(v1 only) error = %v, want ErrNoV2", err)
	}
	if _, err := ParseProcCgroup([]byte("0::relative\n")); err == nil {
		t.Error("ParseProcCgroup(relative) error = nil, want error")
	}
}

func TestParseEvents(t *testing.T) {
	ev, err := ParseEvents([]byte("populated 1\nfrozen 0\n"))
	if err != nil || !ev.Populated || ev.Frozen {
		t.Errorf("ParseEvents(populated 1) = %+v, %v", ev, err)
	}
	ev, err = ParseEvents([]byte("populated 0\nfrozen 1\n"))
	if err != nil || ev.Populated || !ev.Frozen {
		t.Errorf("ParseEvents(populated 0) = %+v, %v", ev, err)
	}
	if _, err := ParseEvents([]byte("frozen 0\n")); err == nil {
		t.Error("ParseEvents(no populated) error = nil, want error")
	}
}

func TestParsePids(t *testing.T) {
	got, err := ParsePids([]byte("12\n345\n"))
	if err != nil || !reflect.DeepEqual(got, []int{12, 345}) {
		t.Errorf("ParsePids() = %v, %v", got, err)
	}
	if got, err := ParsePids(nil); err != nil || len(got) != 0 {
		t.Errorf("ParsePids(empty) = %v, %v", got, err)
	}
	if _, err := ParsePids([]byte("12\nx\n")); err == nil {
		t.Error("ParsePids(garbage) error = nil, want error")
	}
}

func TestParseCPUStat(t *testing.T) {
	got, err := ParseCPUStat([]byte("usage_usec 30\nuser_usec 10\nsystem_usec 20\nnr_periods 0\n"))
	want := CPUStat{UsageUsec: 30, UserUsec: 10, SystemUsec: 20}
	if err != nil || got != want {
		t.Errorf("ParseCPUStat() = %+v, %v, want %+v", got, err, want)
	}
	if _, err := ParseCPUStat([]byte("usage_usec x\n")); err == nil {
		t.Error("ParseCPUStat(garbage) error = nil, want error")
	}
}

func TestParseV1Mounts(t *testing.T) {
	in := "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
		"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n" +
		"35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
		"40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	got := ParseV1Mounts([]byte(in))
	want := map[string]string{"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct", "memory": "/sys/fs/cgroup/memory"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseV1Mounts() = %v, want %v", got, want)
	}
}

func TestParseProcCgroupV1(t *testing.T) {
	got := ParseProcCgroupV1([]byte("9:name=systemd:/\n4:memory:/a/b\n2:cpu,cpuacct:/c\n0::/\n"))
	if got["memory"] != "/a/b" || got["cpu"] != "/c" || got["cpuacct"] != "/c" || len(got) != 3 {
		t.Errorf("ParseProcCgroupV1() = %v", got)
	}
}
