//go:build !crashpoints || !unix

package crash

// Point does nothing in release builds.
func Point(name string) {}

// Enabled reports whether crash points are compiled in.
const Enabled = false
