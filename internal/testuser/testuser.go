// Package testuser gives tests a second, ordinary user to run tether as
// (the checks that guard other users' files and processes, registry's
// ownership checks and reap's "not this user's leaf", only act when the
// caller is not root), and a temp dir whose cleanup works under Wine.
package testuser

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// Ensure returns the uid and gid of the system user name, made with
// useradd (no home, no login shell) when it does not exist, and then
// removed with userdel when t ends. It skips t unless the caller is root
// and useradd is present. Each package uses a name of its own, so that
// one package's cleanup never removes the user another is running as.
func Ensure(t testing.TB, name string) (uid, gid int) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: makes a second user with useradd")
	}
	u, err := user.Lookup(name)
	if err != nil {
		useradd, lerr := exec.LookPath("useradd")
		if lerr != nil {
			t.Skipf("no useradd to make a second user: %v", lerr)
		}
		if out, err := exec.Command(useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v\n%s", name, err, out)
		}
		t.Cleanup(func() {
			if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
				t.Errorf("userdel %s: %v\n%s", name, err, out)
			}
		})
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// PublicDir returns a fresh t.TempDir that every user can read and enter:
// the second user runs binaries and keeps state there (t.TempDir's own
// parent is created 0700).
func PublicDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
