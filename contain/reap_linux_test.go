package contain

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
)

// hasChildrenHelperEnv makes the test binary, started by TestHasChildren,
// report hasChildren() in its exit status and do nothing else.
const hasChildrenHelperEnv = "TETHER_TEST_HAS_CHILDREN"

// hasChildrenHelper is the helper process's whole work: 0 when it has no
// child, as it must, 1 otherwise.
func hasChildrenHelper() int {
	if hasChildren() {
		return 1
	}
	return 0
}

// TestHasChildren: the probe that lets the orphan sweep skip its
// per-thread reads says yes for a live child and for an unreaped zombie,
// and no in a process that has none (a fresh copy of the test binary,
// where no other test's child can be).
func TestHasChildren(t *testing.T) {
	c := exec.Command("sleep", "1000")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	h, err := identity.OpenChild(c.Process.Pid)
	if err != nil {
		c.Process.Kill()
		c.Wait()
		t.Fatal(err)
	}
	defer h.Close()
	if !hasChildren() {
		t.Error("hasChildren() = false with a live child")
	}
	c.Process.Kill()
	if !h.WaitExit(10 * time.Second) {
		t.Fatal("the killed child did not exit")
	}
	if !hasChildren() {
		t.Error("hasChildren() = false with an unreaped zombie child")
	}
	c.Wait()

	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), hasChildrenHelperEnv+"=1")
	if out, err := helper.CombinedOutput(); err != nil {
		t.Fatalf("hasChildren() in a process without children: %v (exit 1: it said true)\n%s", err, out)
	}
}
