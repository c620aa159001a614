package contain

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/cgroup"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/receipt"
)

func TestMain(m *testing.M) {
	if os.Getenv(hasChildrenHelperEnv) != "" {
		os.Exit(hasChildrenHelper())
	}
	os.Exit(leakcheck.Main(m))
}

// mechanisms returns the mechanisms this machine can test; cgroup is
// skipped, with the reason, only where no writable v2 parent exists.
func mechanisms(t *testing.T) []receipt.Mechanism {
	ms := []receipt.Mechanism{receipt.MechanismFallback}
	p, err := cgroup.DefaultParent()
	if err == nil {
		err = cgroup.CheckParent(p)
	}
	if err != nil {
		t.Logf("cgroup mechanism not tested: %v", err)
		return ms
	}
	return append([]receipt.Mechanism{receipt.MechanismCgroup}, ms...)
}

// marked returns live processes carrying the case marker.
func marked(mark string) map[int]string { return leakcheck.Find("TETHER_CASE", mark) }

type scenario struct {
	name string
	argv []string // may use $D, a private temp dir
	// timedOut scenarios never end by themselves: they are timed out
	// (BeginStop, ReasonTimeout) once they have created $D/ready, their
	// trap set. A fixed Timeout raced sh's start: under TCG 300 ms could
	// pass before the trap, and then no kill was needed.
	timedOut bool
	// minMembers is how many members the stop must have found; needKill
	// says the scenario cannot end without the kill phase.
	minMembers int
	needKill   bool
	needArgv   string // a member's argv[0] must contain this
	needs      string // a program that must be installed
}

var scenarios = []scenario{
	{name: "plain child", argv: []string{"sh", "-c", "sleep 1000 & echo started"}, minMembers: 1},
	{name: "setsid grandchild", argv: []string{"sh", "-c", "sh -c 'setsid sleep 1000 &'; exit 0"}, minMembers: 1},
	{name: "double-forked daemon", argv: []string{"sh", "-c", "(sleep 1000 &); exit 0"}, minMembers: 1},
	{name: "TERM-ignoring setsid tree", argv: []string{"sh", "-c",
		`setsid sh -c 'trap "" TERM; sleep 1000 & sleep 1000 & touch "$D/ready"; wait' & while [ ! -e "$D/ready" ]; do sleep 0.01; done`},
		minMembers: 3, needKill: true},
	{name: "tmux server", argv: []string{"tmux", "-S", "$D/tmux.sock", "-f", "/dev/null", "new-session", "-d", "sleep 1000"},
		minMembers: 1, needArgv: "tmux", needs: "tmux"},
	{name: "main exits at once leaving a daemon", argv: []string{"setsid", "-f", "sleep", "1000"}, minMembers: 1},
	{name: "keeps forking while stopped", argv: []string{"sh", "-c", `trap "" TERM; (sleep 1000 &); touch "$D/ready"; while :; do (sleep 1000 &); done`},
		timedOut: true, minMembers: 2, needKill: true},
}

func TestScenariosLeaveNothing(t *testing.T) {
	for _, mech := range mechanisms(t) {
		for _, sc := range scenarios {
			t.Run(string(mech)+"/"+sc.name, func(t *testing.T) {
				if sc.needs != "" {
					if _, err := exec.LookPath(sc.needs); err != nil {
						t.Skipf("%s not installed: %v", sc.needs, err)
					}
				}
				r := runScenario(t, mech, sc, false)
				if r.Evidence.MembersSeen < sc.minMembers {
					t.Errorf("members seen = %d, want at least %d (the scenario did not build its tree?)", r.Evidence.MembersSeen, sc.minMembers)
				}
				if sc.needKill && !r.Evidence.KillUsed {
					t.Errorf("kill_used = false, want true: every member ignores SIGTERM")
				}
				if sc.needArgv != "" && !hasArgv(r, sc.needArgv) {
					t.Errorf("no straggler with argv[0] containing %q in %+v", sc.needArgv, r.Stragglers)
				}
			})
		}
	}
}

// TestFallbackClaimsOrphansByMarker runs the fallback without
// AdoptOrphans: a double-forked daemon reparented to the test process must
// be recognised by the group marker in its environment.
func TestFallbackClaimsOrphansByMarker(t *testing.T) {
	sc := scenario{name: "double fork", argv: []string{"sh", "-c", "(sleep 1000 &); (setsid sleep 1000 &); exit 0"}}
	r := runScenario(t, receipt.MechanismFallback, sc, true)
	if r.Evidence.MembersSeen < 2 {
		t.Errorf("members seen = %d, want 2", r.Evidence.MembersSeen)
	}
}

func runScenario(t *testing.T, mech receipt.Mechanism, sc scenario, markerOnly bool) *receipt.Receipt {
	t.Helper()
	dir := t.TempDir()
	var b [8]byte
	rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	argv := make([]string, len(sc.argv))
	for i, a := range sc.argv {
		argv[i] = strings.ReplaceAll(a, "$D/", dir+"/")
	}
	c := Command(argv[0], argv[1:]...)
	c.Env = append(os.Environ(), "TETHER_CASE="+mark, "D="+dir)
	c.Mechanism = mech
	c.Grace = 200 * time.Millisecond
	c.AdoptOrphans = !markerOnly
	t.Cleanup(func() {
		for pid := range marked(mark) {
			syscallKill(pid)
		}
	})
	if err := c.Start(); err != nil {
		t.Fatalf("Start() error = %v", err)
	}
	if sc.timedOut {
		waitFile(t, filepath.Join(dir, "ready"))
		c.BeginStop(ReasonTimeout)
	}
	err := c.Wait()
	r := c.Receipt()
	if errors.Is(err, ErrNotConfirmed) {
		t.Errorf("Wait() error = %v", err)
	}
	if !r.StopConfirmed {
		t.Errorf("stop_confirmed = false; evidence %+v steps %+v", r.Evidence, r.Stop.Steps)
	}
	if r.Mechanism != mech {
		t.Errorf("mechanism = %q, want %q", r.Mechanism, mech)
	}
	if left := marked(mark); len(left) > 0 {
		t.Errorf("%d processes survived the run: %v", len(left), left)
	}
	if mech == receipt.MechanismCgroup {
		if _, err := os.Stat(r.Cgroup.Path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("leaf %s still exists (%v)", r.Cgroup.Path, err)
		}
		if !r.Evidence.LeafRemoved || r.Cgroup.Verified == "" {
			t.Errorf("leaf_removed = %t, placement_verified_by = %q", r.Evidence.LeafRemoved, r.Cgroup.Verified)
		}
	}
	return r
}

func hasArgv(r *receipt.Receipt, s string) bool {
	for _, p := range r.Stragglers {
		if len(p.Argv) > 0 && strings.Contains(p.Argv[0], s) {
			return true
		}
	}
	return false
}
