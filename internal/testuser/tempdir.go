package testuser

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TempDir is t.TempDir for tests that also run under Wine: a new
// directory, removed at t's end entry by entry, deepest first, each
// error ignored. Under Wine 8, os.RemoveAll, and so t.TempDir's cleanup,
// fails (FileDispositionInformationEx is not implemented) and fails the
// test; what cannot be removed here is left in the system's temp dir.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tether-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var paths []string
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error {
			paths = append(paths, p)
			return nil
		})
		slices.Reverse(paths) // every entry before the dir holding it
		for _, p := range paths {
			os.Remove(p)
		}
	})
	return dir
}
