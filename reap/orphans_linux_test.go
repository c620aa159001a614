package reap_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/reap"
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
