package contain

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/tether-run/tether/internal/identity"

	"golang.org/x/sys/unix"
)

func subreaperFlag(t *testing.T) int32 {
	var v int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&v)), 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSubreaperScoped: the program is the child subreaper only while a
// contained command runs, and afterwards a daemonizing grandchild of its
// own os/exec child is no longer reparented to it (it would stay a zombie
// the program never reaps). A flag the program set itself is kept.
func TestSubreaperScoped(t *testing.T) {
	if subreaperFlag(t) != 0 {
		t.Fatal("the test binary is a subreaper before any run; a run left the scope held")
	}
	dir := t.TempDir()
	c := Command("sh", "-c", `touch "$0/ready"; exec sleep 1000`, dir)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "ready"))
	during := subreaperFlag(t)
	c.Kill()
	c.Wait()
	if during != 1 || subreaperFlag(t) != 0 {
		t.Errorf("subreaper during the run %d, after %d; want 1, 0", during, subreaperFlag(t))
	}

	// An os/exec child that daemonizes a grandchild and exits: the
	// grandchild must go to init (or the nearest other subreaper), not to us.
	pidFile := filepath.Join(dir, "pid")
	if err := exec.Command("sh", "-c", `sleep 1000 & echo $! > "$0"`, pidFile).Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Kill(pid, unix.SIGKILL)
	// sh has exited (Run returned): the sleep is reparented by now.
	st, err := identity.ReadStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	ppid := st.PPID
	if ppid == os.Getpid() {
		t.Errorf("the grandchild %d was reparented to the test binary after the run ended", pid)
	}

	// A subreaper flag the program set itself is left set.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	if err := Command("true").Run(); err != nil {
		t.Fatal(err)
	}
	if subreaperFlag(t) != 1 {
		t.Error("a run turned off the subreaper flag the program had set itself")
	}
}
