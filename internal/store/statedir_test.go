//go:build unix || windows

package store

import (
	"os"
	"path/filepath"
	"testing"
)

// stateDir is a fresh state dir path, removed with RemoveAll (t.TempDir's
// os.RemoveAll fails under Wine 8).
func stateDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "tether-registry-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := RemoveAll(d); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return filepath.Join(d, "state")
}
