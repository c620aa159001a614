package reap_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/testuser"
)

// TestFaultOrphanLeavesNeverKilled: a populated leaf that no record names
// (a library user's run, a session of another state dir, a start before
// its record) is reported and left running by `reap --orphan-leaves`; an
// empty one is removed only once older than reap.StaleAge.
func TestFaultOrphanLeavesNeverKilled(t *testing.T) {
	t.Parallel()
	f := faultSetup(t)
	mk := func() string {
		d := filepath.Join(f.cg, cgroup.LeafPrefix+faultHex(8))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	busy, young, old := mk(), mk(), mk()
	fd, err := syscall.Open(busy, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	cmd := exec.Command("sleep", "1000")
	cmd.Env = append(os.Environ(), faultCaseEnv+"="+f.mark)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	long := time.Now().Add(-2 * reap.StaleAge)
	for _, d := range []string{busy, old} {
		if err := os.Chtimes(d, long, long); err != nil {
			t.Fatal(err)
		}
	}

	r, rep := f.reap("--orphan-leaves")
	if r.code != 0 {
		t.Errorf("tether reap --orphan-leaves = %s: %s", r, r.stderr)
	}
	got := map[string]reap.OrphanLeaf{}
	for _, ol := range rep.OrphanLeaves {
		got[ol.Path] = ol
	}
	if ol := got[busy]; !ol.Populated || ol.Removed || ol.Procs != 1 || ol.Plan == "" {
		t.Errorf("populated orphan leaf: %+v, want reported populated with 1 process, left alone", ol)
	}
	select {
	case <-exited:
		t.Errorf("the process in the populated orphan leaf was killed: reap cannot prove it is its own")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := os.Stat(busy); err != nil {
		t.Errorf("populated orphan leaf removed: %v", err)
	}
	if ol := got[young]; ol.Removed || ol.Plan == "" {
		t.Errorf("young empty orphan leaf: %+v, want left for now (a start in flight may own it)", ol)
	}
	if ol := got[old]; !ol.Removed || ol.Error != "" {
		t.Errorf("old empty orphan leaf: %+v, want removed", ol)
	}
	cmd.Process.Kill()
	<-exited
	for _, d := range []string{busy, young} {
		for i := 0; i < 100 && os.Remove(d) != nil; i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestFaultOrphanLeafOfAnotherUser: an ordinary user's `reap
// --orphan-leaves` never removes another user's leaf, even one it could
// remove (empty, old, in a cgroup delegated to it, so rmdir would
// succeed): it reports "not this user's leaf". Its own leaf beside it is
// removed, so the reap did act. Run as a user the test makes: as root the
// rule does not apply (root may tidy any leaf).
func TestFaultOrphanLeafOfAnotherUser(t *testing.T) {
	uid, gid := testuser.Ensure(t, "tether-test3")
	f := faultSetup(t)
	deleg := filepath.Join(f.cg, "deleg")
	if err := os.Mkdir(deleg, 0o755); err != nil {
		t.Fatal(err)
	}
	leaf := func(owner int) string {
		d := filepath.Join(deleg, cgroup.LeafPrefix+faultHex(8))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-2 * reap.StaleAge)
		if err := os.Chown(d, owner, owner); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
		return d
	}
	others, own := leaf(0), leaf(uid)
	t.Cleanup(func() { // before faultSetup's cleanups: the cgroup goes last
		for _, d := range []string{others, own, deleg} {
			if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
				t.Errorf("rmdir %s: %v", d, err)
			}
		}
	})
	// Delegated the standard way: the directory and its process files.
	for _, p := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
		if err := os.Chown(filepath.Join(deleg, p), uid, gid); err != nil {
			t.Fatalf("delegate %s: %v", p, err)
		}
	}
	fd, err := syscall.Open(deleg, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)

	// The user's tether binary and state dir: go test's dirs are 0700.
	pub := testuser.PublicDir(t)
	b, err := os.ReadFile(f.bin)
	if err != nil {
		t.Fatal(err)
	}
	bin, xdg := filepath.Join(pub, "tether"), filepath.Join(pub, "xdg")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(xdg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(xdg, uid, gid); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(xdg) })
	cmd := exec.Command(bin, "reap", "--json", "--orphan-leaves")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + xdg, "TETHER_NO_WATCH=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential:  &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		UseCgroupFD: true, CgroupFD: fd, // born in the delegated cgroup: its leaves are the ones scanned
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tether reap --orphan-leaves as uid %d: %v\nstderr: %s", uid, err, stderr.String())
	}
	var rep reap.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout.String())
	}
	got := map[string]reap.OrphanLeaf{}
	for _, ol := range rep.OrphanLeaves {
		got[ol.Path] = ol
	}
	if ol := got[others]; ol.Removed || ol.Plan != "leave it: not this user's leaf" {
		t.Errorf("another user's empty old leaf: %+v; want left, as not this user's", ol)
	}
	if _, err := os.Stat(others); err != nil {
		t.Errorf("another user's leaf is gone: %v", err)
	}
	if ol := got[own]; !ol.Removed || ol.Error != "" {
		t.Errorf("the user's own empty old leaf: %+v; want removed", ol)
	}
}
