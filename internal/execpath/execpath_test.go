package execpath

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// TestLook: the search is on env's PATH and relative to dir; what is found
// only as a directory or a file without x is a permission error (126),
// what is not found at all is exec.ErrNotFound (127).
func TestLook(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows searches the process's PATH with PATHEXT: exec.LookPath's own tests")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "tool"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(bin, "plain"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(bin, "adir"), 0o755)
	env := []string{"PATH=/nonexistent", "PATH=" + bin}
	for _, c := range []struct {
		name, dir string
		env       []string
		want      string
		err       error
	}{
		{"tool", "", env, filepath.Join(bin, "tool"), nil},
		{"tool", dir, []string{"PATH=bin"}, filepath.Join(dir, "bin", "tool"), nil},
		{"./bin/tool", dir, env, filepath.Join(dir, "bin", "tool"), nil},
		{"plain", "", env, "", fs.ErrPermission},
		{"adir", "", env, "", fs.ErrPermission},
		{"missing", "", env, "", exec.ErrNotFound},
		{"./missing", dir, env, "", exec.ErrNotFound},
	} {
		got, err := Look(c.name, c.env, c.dir)
		var ee *exec.Error
		switch {
		case c.err == nil && (err != nil || got != c.want):
			t.Errorf("Look(%q, %q, %q) = %q, %v; want %q", c.name, c.env, c.dir, got, err, c.want)
		case c.err != nil && (!errors.Is(err, c.err) || !errors.As(err, &ee)):
			t.Errorf("Look(%q, %q, %q) = %q, %v; want an *exec.Error wrapping %v", c.name, c.env, c.dir, got, err, c.err)
		}
	}
}
