//go:build !linux

package atomicfile

import "os"

// createUnnamed is not available on this system: Create links a named
// temporary file.
func createUnnamed(filename string, data []byte, perm os.FileMode) (bool, error) {
	return false, nil
}
