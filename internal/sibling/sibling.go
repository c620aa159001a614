// Package sibling finds a program installed beside the running one:
// tether and tether-mcp are installed together, and each runs the other.
package sibling

import (
	"os"
	"path/filepath"
	"runtime"
)

// Path returns the program name (".exe" added on Windows) in the
// running program's directory, if it is there.
func Path(name string) (string, bool) {
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	self, err := os.Executable()
	if err != nil {
		return "", false
	}
	p := filepath.Join(filepath.Dir(self), name)
	st, err := os.Stat(p)
	return p, err == nil && !st.IsDir()
}
