package delegate

import (
	"regexp"
	"strconv"
	"testing"
)

// userManagerRe is what managerOf matched before it was a loop (issue
// 13: the regexp was compiled at every tether start), kept as its
// specification.
var userManagerRe = regexp.MustCompile(`/user@(\d+)\.service(/|$)`)

func managerOfRe(dir string) (Manager, int) {
	m := userManagerRe.FindStringSubmatchIndex(dir)
	if m == nil || m[1] == len(dir) {
		return ManagerSystem, 0
	}
	uid, _ := strconv.Atoi(dir[m[2]:m[3]])
	return ManagerUser, uid
}

var managerInputs = []string{
	"", "/", "/user@", "/user@.service/x", "/user@1000.service", "/user@1000.service/", "/user@1000.service/app.slice",
	"/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-p1.scope",
	"/user@12x.service/a", "/user@1.servicex/a", "/user@1.service/user@2.service/a", "/user@x/user@7.service/a",
	"/user@1.servic", "user@1.service/a", "//user@3.service//", "/user@99999999999999999999.service/a",
}

// TestManagerOfAsRegexp: managerOf agrees with the regexp it replaced.
func TestManagerOfAsRegexp(t *testing.T) {
	for _, in := range managerInputs {
		checkManagerOf(t, in)
	}
}

// FuzzManagerOf checks the same on any path.
func FuzzManagerOf(f *testing.F) {
	for _, in := range managerInputs {
		f.Add(in)
	}
	f.Fuzz(checkManagerOf)
}

func checkManagerOf(t *testing.T, in string) {
	m, uid := managerOf(in)
	wm, wuid := managerOfRe(in)
	if m != wm || uid != wuid {
		t.Errorf("managerOf(%q) = %v, %d, want %v, %d", in, m, uid, wm, wuid)
	}
}
