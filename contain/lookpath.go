package contain

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// lookPath resolves name as exec.LookPath does, with the answer a shell
// and timeout(1) give for a name found on PATH only as something that
// cannot be executed (a directory, a file without x): execvp fails with
// EACCES there, so the exit code is 126 ("cannot execute"), not 127
// ("not found", which is all LookPath says).
func lookPath(name string) (string, error) {
	lp, err := exec.LookPath(name)
	if err == nil || runtime.GOOS == "windows" || !errors.Is(err, exec.ErrNotFound) || strings.Contains(name, "/") {
		return lp, err
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		if _, serr := os.Stat(filepath.Join(dir, name)); serr == nil {
			return "", &exec.Error{Name: name, Err: fs.ErrPermission}
		}
	}
	return "", err
}
