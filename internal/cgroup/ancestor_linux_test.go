package cgroup

import "testing"

func TestCommonAncestor(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a/c", "/sys/fs/cgroup/a"},
		{"/sys/fs/cgroup/a", "/sys/fs/cgroup/a/c/d", "/sys/fs/cgroup/a"},
		{"/sys/fs/cgroup/a/b/c", "/sys/fs/cgroup/a", "/sys/fs/cgroup/a"},
		{"/sys/fs/cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup"},
		{"/sys/fs/cgroup/ab", "/sys/fs/cgroup/a", "/sys/fs/cgroup"},
	} {
		if got := commonAncestor(tt.a, tt.b); got != tt.want {
			t.Errorf("commonAncestor(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}
