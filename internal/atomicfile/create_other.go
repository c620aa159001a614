//go:build !linux

package atomicfile

import "os"

// createUnnamed is not available on this system: create links a named
// temporary file.
func createUnnamed(d dir, name string, data []byte, perm os.FileMode) (bool, error) {
	return false, nil
}
