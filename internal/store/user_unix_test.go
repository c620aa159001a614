//go:build unix

package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tether-run/tether/internal/testuser"
)

// helperEnv makes the test binary a helper (TestMain): it opens the
// default registry of its environment, as the tether command does, and
// prints "ok DIR" or "error MESSAGE".
const helperEnv = "TETHER_REGISTRY_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "open" {
		os.Exit(openDefault(os.Stdout))
	}
	os.Exit(m.Run())
}

func openDefault(w io.Writer) int {
	dir, err := DefaultDir(os.Getenv)
	if err == nil {
		var r *Registry
		if r, err = Open(dir); err == nil {
			fmt.Fprintf(w, "ok %s\n", r.Dir)
			return 0
		}
	}
	fmt.Fprintf(w, "error %v\n", err)
	return 1
}

// testUserName is the second user the tests make; not cli's tether-test,
// so that neither package's tests remove the other's user.
const testUserName = "tether-test2"

// secondUser returns the uid and gid of a user other than the caller
// (testuser.Ensure). It needs root.
func secondUser(t *testing.T) (uid, gid int) { return testuser.Ensure(t, testUserName) }

// publicDir is a t.TempDir that any user can search.
func publicDir(t *testing.T) string { return testuser.PublicDir(t) }

// openAs runs the helper as uid and gid with the environment env (and
// PATH) and returns what it printed: "ok DIR" or "error MESSAGE". The
// test binary is copied to a public directory first: go test builds it
// in a 0700 one.
func openAs(t *testing.T, uid, gid int, env ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(publicDir(t), "registry.test")
	if err := os.WriteFile(cp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cp)
	cmd.Dir = "/"
	cmd.Env = append([]string{helperEnv + "=open", "PATH=" + os.Getenv("PATH")}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run() // its exit code is in what it printed
	return strings.TrimSpace(out.String())
}

// chownAll gives the paths to uid and gid, not following symlinks.
func chownAll(t *testing.T, uid, gid int, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Lchown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
}

// fileUID is the owner of the file st describes.
func fileUID(st os.FileInfo) int { return int(st.Sys().(*syscall.Stat_t).Uid) }
