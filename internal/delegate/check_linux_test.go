package delegate

import "testing"

func TestUnitDir(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/sys/fs/cgroup/system.slice/vm-job.service", "/sys/fs/cgroup/system.slice/vm-job.service"},
		{"/sys/fs/cgroup/system.slice/tether-1-ab.scope/supervisor", "/sys/fs/cgroup/system.slice/tether-1-ab.scope"},
		{"/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-p1.scope/tether-x/y", "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-p1.scope"},
		{"/sys/fs/cgroup/user.slice/user-1000.slice", ""},
		{"/sys/fs/cgroup", ""},
		{"/sys/fs/cgroup/unified/tether-test-1", ""},
	} {
		if got := unitDir(tc.in); got != tc.want {
			t.Errorf("unitDir(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestManagerOf(t *testing.T) {
	for _, tc := range []struct {
		in  string
		m   Manager
		uid int
	}{
		{"/sys/fs/cgroup/system.slice/x.service", ManagerSystem, 0},
		{"/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service", ManagerSystem, 0},
		{"/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/a.scope", ManagerUser, 1000},
		{"/sys/fs/cgroup/user.slice/user-42.slice/session-3.scope", ManagerSystem, 0},
	} {
		m, uid := managerOf(tc.in)
		if m != tc.m || uid != tc.uid {
			t.Errorf("managerOf(%q) = %s, %d, want %s, %d", tc.in, m, uid, tc.m, tc.uid)
		}
	}
}

func TestUnitPath(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"vm-job.service", "/org/freedesktop/systemd1/unit/vm_2djob_2eservice"},
		{"tether-1-ab.scope", "/org/freedesktop/systemd1/unit/tether_2d1_2dab_2escope"},
		{"user@1000.service", "/org/freedesktop/systemd1/unit/user_401000_2eservice"},
		{"1x.scope", "/org/freedesktop/systemd1/unit/_31x_2escope"},
	} {
		if got := unitPath(tc.in); string(got) != tc.want {
			t.Errorf("unitPath(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
