package contain

import (
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// cloneIntoCgroup reports whether the kernel can start a child straight
// into a cgroup (clone3 with CLONE_INTO_CGROUP, Linux 5.7). Older kernels
// fail such a clone with ENOSYS (no clone3, before 5.3) or EINVAL (no
// flag), which would surface as a puzzling exec error; without it no
// instant-free placement exists, so auto mode takes the fallback. Tests
// replace it to exercise that path on a newer kernel.
var cloneIntoCgroup = sync.OnceValue(func() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return true // let the clone itself say
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 7)
})

// kernelAtLeast reports whether release ("6.12.117+deb13-amd64") is at
// least major.minor; an unparsable release counts as new enough.
func kernelAtLeast(release string, major, minor int) bool {
	f := strings.FieldsFunc(release, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return true
	}
	ma, err1 := strconv.Atoi(f[0])
	mi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return true
	}
	return ma > major || ma == major && mi >= minor
}
