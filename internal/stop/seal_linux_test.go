package stop

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/receipt"
)

// TestSealBeforeFirstLook: once the stop has looked at the leaf, nothing
// can be started into it (issue 22, item 3). A `tether exec` that raced
// the stop used to join after the stop saw the leaf empty: the receipt
// said confirmed, rmdir failed with EBUSY, and the joined daemon ran on.
func TestSealBeforeFirstLook(t *testing.T) {
	g := startGroup(t, `touch "$D/ready"`) // the main exits: the leaf empties by itself
	<-g.done
	var late error
	r := &Run{Leaf: g.leaf, Policy: Policy{KillWait: 5 * time.Second}}
	r.Progress = func(s receipt.Step) {
		if s.Name != "term" {
			return
		}
		// Where Join would start its process: after the first look.
		_, release, err := g.leaf.StartFD()
		release()
		late = err
	}
	r.Do()
	if !errors.Is(late, cgroup.ErrSealed) {
		t.Errorf("StartFD after the stop's first look = %v, want ErrSealed", late)
	}
	checkStopped(t, r)
}

// TestRemovePopulatedAgain: a process written into cgroup.procs after the
// kernel said empty (the seal cannot refuse that) makes rmdir fail with
// EBUSY; the stop goes on — kills it, confirms it gone, removes the leaf
// — instead of keeping the leaf and the process running.
func TestRemovePopulatedAgain(t *testing.T) {
	g := startGroup(t, obeysTERM)
	intruder := exec.Command("sleep", "1000")
	if err := intruder.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	died := make(chan struct{})
	go func() { waitErr = intruder.Wait(); close(died) }()
	t.Cleanup(func() {
		intruder.Process.Kill()
		<-died
	})
	r := &Run{Leaf: g.leaf, Policy: Policy{Grace: 5 * time.Second, KillWait: 5 * time.Second}}
	r.Finish = func(bool) {
		// The last moment before the removal.
		pid := strconv.Itoa(intruder.Process.Pid)
		if err := os.WriteFile(filepath.Join(g.leaf.Path, "cgroup.procs"), []byte(pid), 0); err != nil {
			t.Errorf("move %s into the leaf: %v", pid, err)
		}
	}
	r.Do()
	checkStopped(t, r)
	select {
	case <-died:
		if waitErr == nil || !strings.Contains(waitErr.Error(), "killed") {
			t.Errorf("the process that entered late ended with %v, want killed", waitErr)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the process that entered the leaf after it was empty still runs; steps %+v", r.Steps)
	}
	if r.Evidence.ConfirmedGone < 4 || !r.Evidence.KillUsed {
		t.Errorf("evidence = %+v, want the late member confirmed gone by a kill", r.Evidence)
	}
}

// TestRemoveChildCgroups: cgroups a member made inside the leaf (root
// can) are empty once the leaf is, and removed with it; they kept the
// leaf (rmdir EBUSY) before.
func TestRemoveChildCgroups(t *testing.T) {
	g := startGroup(t, `CG=$(awk '$3=="cgroup2"{print $2; exit}' /proc/mounts)$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir -p "$CG/a/b" "$CG/c" && touch "$D/ready"; exec sleep 1000`)
	if _, err := os.Stat(filepath.Join(g.leaf.Path, "a", "b")); err != nil {
		t.Fatalf("the member made no child cgroup: %v", err)
	}
	r := g.stop(time.Second)
	checkStopped(t, r)
}
