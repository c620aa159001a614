package randid

import "golang.org/x/sys/unix"

// kernel fills b with getrandom(2), which blocks only until the kernel's
// generator is seeded at boot, as crypto/rand does. It is not crypto/rand
// because that one's first Read in a process costs ~60 µs here (the vDSO
// generator's state is set up), a share of every tether run that names
// a run, a leaf and a record once each (issue 13); the system call
// costs ~1 µs after the first. It reports false, leaving the rest to
// crypto/rand, on any failure.
func kernel(b []byte) bool {
	for len(b) > 0 {
		n, err := unix.Getrandom(b, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		b = b[n:]
	}
	return true
}
