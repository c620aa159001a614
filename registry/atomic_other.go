//go:build unix && !linux

package registry

// createUnnamedAt is not available on this system: createAt links a
// named temporary file.
func createUnnamedAt(dirfd int, name, p string, data []byte, perm uint32) (bool, error) {
	return false, nil
}
