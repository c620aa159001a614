// Package execpath resolves a command's name to the file a shell would
// run, on the PATH the command itself will get.
package execpath

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Look resolves name as exec.LookPath does, with two differences:
//
//   - The search is on the PATH in env, the environment the command will
//     get (tether exec -e PATH=…), relative entries and a name with a
//     slash taken from dir (empty: the current directory). With env nil,
//     or on Windows, it is the process's own PATH and directory.
//   - A name found on PATH only as something that cannot be executed (a
//     directory, a file without x) fails with fs.ErrPermission inside an
//     *exec.Error, as execvp's EACCES does for a shell and timeout(1):
//     exit 126 ("cannot execute"), not 127 ("not found").
//
// The path returned is absolute when dir or a PATH entry made it so.
func Look(name string, env []string, dir string) (string, error) {
	if env == nil || runtime.GOOS == "windows" {
		return fromProcess(name)
	}
	path, ok := lookup(env, "PATH")
	if !ok {
		path = os.Getenv("PATH")
	}
	if strings.Contains(name, "/") {
		return check(name, in(dir, name))
	}
	found := false
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := in(dir, filepath.Join(d, name))
		switch _, err := check(name, p); {
		case err == nil:
			return p, nil
		case errors.Is(err, fs.ErrPermission):
			found = true
		}
	}
	if found {
		return "", &exec.Error{Name: name, Err: fs.ErrPermission}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// fromProcess is exec.LookPath with the 126 answer for what cannot be
// executed.
func fromProcess(name string) (string, error) {
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

// check says whether p is a file that can be executed: nil, or an
// *exec.Error wrapping exec.ErrNotFound or fs.ErrPermission.
func check(name, p string) (string, error) {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	case st.IsDir() || st.Mode()&0o111 == 0:
		return "", &exec.Error{Name: name, Err: fs.ErrPermission}
	}
	return p, nil
}

// in is p taken from dir when p is relative and dir is given.
func in(dir, p string) string {
	if dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// lookup is the last value of key in env: os/exec keeps the last of
// duplicate entries.
func lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}
