package delegate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tether-run/tether/internal/cgroup"
	"golang.org/x/sys/unix"
)

// marksUID is the other user of TestUserMarks: nobody, as in cli's tests.
const marksUID = 65534

// marksEnv makes the test binary TestUserMarks's helper; its value is the
// directory of the test's cgroups.
const marksEnv = "TETHER_DELEGATE_MARKS"

// TestUserMarks: a user.* mark proves only that root or the caller set it
// (issue 22). The kernel lets a cgroup's owner set user.delegate and
// user.tether.scope on it, and only CAP_SYS_ADMIN set or read
// trusted.delegate; so root takes neither user.* mark on another user's
// cgroup as proof (before, it took them as own-scope and systemd-xattr),
// while the owner is shown the mark it set itself as user-xattr, which
// says it proves no delegation. The other user is uid 65534, in a helper
// process. Needs root and cgroup v2.
func TestUserMarks(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root: gives cgroups to another uid")
	}
	mount, err := cgroup.Mount()
	if err != nil {
		t.Skipf("no cgroup v2: %v", err)
	}
	self, err := cgroup.Self(0)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(mount, self, fmt.Sprintf("tether-marks-test-%d", os.Getpid()))
	mk := func(name string, uid int, attrs ...string) string {
		t.Helper()
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(d) })
		if err := os.Chown(d, uid, uid); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(attrs); i += 2 {
			if err := unix.Setxattr(d, attrs[i], []byte(attrs[i+1]), 0); err != nil {
				t.Fatalf("setxattr %s %s: %v", d, attrs[i], err)
			}
		}
		return d
	}
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(base) })
	theirs := mk("theirs.scope", marksUID, "user.delegate", "1", scopeXattr, "theirs.scope")
	mk("mine.scope", marksUID)
	rootUser := mk("root-user.scope", 0, "user.delegate", "1")
	rootTrusted := mk("root-trusted.scope", 0, "trusted.delegate", "1", "user.delegate", "1")
	rootOwn := mk("root-own.scope", 0, scopeXattr, "root-own.scope")

	mg := &managers{}
	defer mg.close()
	ctx := context.Background()
	for _, tc := range []struct {
		dir  string
		want Proof
	}{
		{rootTrusted, ProofXattr},
		{rootUser, ProofUserXattr},
		{rootOwn, ProofOwnScope},
		{filepath.Join(rootOwn, "."), ProofOwnScope},
	} {
		if p, err := prove(ctx, mg, tc.dir); err != nil || p != tc.want {
			t.Errorf("as root, prove(%s) = %q, %v; want %q", tc.dir, p, err, tc.want)
		}
	}
	// Marks uid 65534 could have set: the manager is asked, which has no
	// such unit (or cannot be reached here), and the error says why the
	// marks were not taken.
	if p, err := prove(ctx, mg, theirs); !errors.Is(err, ErrNotDelegated) || !strings.Contains(fmt.Sprint(err), "is no proof: its owner, uid 65534") {
		t.Errorf("as root, prove(%s) = %q, %v; want ErrNotDelegated saying the owner's mark is no proof", theirs, p, err)
	}

	out := runMarksHelper(t, base)
	for _, want := range []string{
		"set user.delegate on mine.scope: ok",
		"set trusted.delegate on mine.scope: operation not permitted",
		"read trusted.delegate on root-trusted.scope: no data available",
		"set user.delegate on root-user.scope: permission denied",
		"prove mine.scope: user-xattr <nil>",
		"prove theirs.scope: own-scope <nil>",
		"prove root-trusted.scope: ErrNotDelegated",
	} {
		if !strings.Contains(out, "\n"+want+"\n") {
			t.Errorf("as uid %d, the helper did not print %q", marksUID, want)
		}
	}
	if t.Failed() {
		t.Logf("helper:\n%s", out)
	}
	if e := ProofUserXattr.Establishes(); !strings.Contains(e, "not that a manager delegated it") {
		t.Errorf("ProofUserXattr.Establishes() = %q; want it to say that it proves no delegation", e)
	}
}

// runMarksHelper runs TestUserMarksHelper as marksUID on the cgroups in
// base and returns what it printed. The test binary is copied to a
// directory that user can reach: go test builds it in a 0700 one.
func runMarksHelper(t *testing.T, base string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cp := filepath.Join(dir, "delegate.test")
	if err := os.WriteFile(cp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cp, "-test.run=^TestUserMarksHelper$", "-test.v")
	cmd.Dir = "/"
	cmd.Env = []string{marksEnv + "=" + base, "PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: marksUID, Gid: marksUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper as uid %d: %v\n%s", marksUID, err, out)
	}
	return "\n" + string(out)
}

// TestUserMarksHelper is TestUserMarks's other user: it tries the
// kernel's rules on the test's cgroups and proves them as Check would,
// one line each.
func TestUserMarksHelper(t *testing.T) {
	base := os.Getenv(marksEnv)
	if base == "" {
		return // only as TestUserMarks's helper process
	}
	try := func(what string, err error) {
		if err == nil {
			fmt.Printf("%s: ok\n", what)
		} else {
			fmt.Printf("%s: %v\n", what, err)
		}
	}
	at := func(name string) string { return filepath.Join(base, name) }
	try("set user.delegate on mine.scope", unix.Setxattr(at("mine.scope"), "user.delegate", []byte("1"), 0))
	try("set trusted.delegate on mine.scope", unix.Setxattr(at("mine.scope"), "trusted.delegate", []byte("1"), 0))
	_, err := getxattr(at("root-trusted.scope"), "trusted.delegate")
	try("read trusted.delegate on root-trusted.scope", err)
	try("set user.delegate on root-user.scope", unix.Setxattr(at("root-user.scope"), "user.delegate", []byte("0"), 0))
	mg := &managers{}
	defer mg.close()
	for _, name := range []string{"mine.scope", "theirs.scope", "root-trusted.scope"} {
		p, err := prove(context.Background(), mg, at(name))
		if errors.Is(err, ErrNotDelegated) {
			fmt.Printf("prove %s: ErrNotDelegated\n\t%v\n", name, err)
			continue
		}
		fmt.Printf("prove %s: %s %v\n", name, p, err)
		if err == nil {
			fmt.Printf("\twhat it establishes: %s\n", p.Establishes())
		}
	}
}
