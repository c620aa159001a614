package contain

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// The test binary re-runs itself as the processes the tests contain (the
// standard library's helper-process pattern): helperEnv names the helper,
// its arguments follow. Every helper carries the test's tag as its first
// argument, so that a survivor can be found by its command line, also from
// Linux, where every Wine process has PPID 1.
const helperEnv = "TETHER_WIN_HELPER"

// tagPrefix starts every tag: .ci/wine/check-leaks.sh looks for it.
const tagPrefix = "tether-wine-test-"

func TestMain(m *testing.M) {
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(runHelper(h, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// newTag returns a fresh tag for one test's processes.
func newTag() string {
	var b [6]byte
	rand.Read(b[:])
	return tagPrefix + hex.EncodeToString(b[:])
}

// helperCmd is a contain.Cmd running helper name, tagged with tag, with
// dir for its ready files.
func helperCmd(t testing.TB, name, tag, dir string, args ...string) *Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := Command(exe, append([]string{tag, dir}, args...)...)
	c.Env = append(helperEnviron(), helperEnv+"="+name)
	return c
}

// helperEnviron is our environment without a helper name.
func helperEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnv+"=") {
			env = append(env, kv)
		}
	}
	return env
}

// spawn starts helper name as a child of this helper, tagged like it, and
// returns without waiting for it.
func spawn(tag, name string, flags uint32, args ...string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := exec.Command(exe, append([]string{tag}, args...)...)
	c.Env = append(helperEnviron(), helperEnv+"="+name)
	c.Stdout, c.Stderr = os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
	return c, c.Start()
}

// ready tells the test that a helper is up: it creates dir/name.
func ready(dir, name string) {
	if dir != "" {
		os.WriteFile(filepath.Join(dir, name), []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
}

// runHelper runs helper name. args are the tag, the directory for ready
// files, and the helper's own arguments.
func runHelper(name string, args []string) int {
	tag, dir, rest := args[0], args[1], args[2:]
	sleep := func() int { time.Sleep(time.Hour); return 0 }
	// then ends a helper that started its descendants: "stay" keeps the
	// main process running, anything else exits at once.
	// It returns once a sleeper is up, so that what it leaves is there
	// when the run ends.
	then := func() int {
		awaitReady(dir)
		if len(rest) > 0 && rest[0] == "stay" {
			return sleep()
		}
		return 0
	}
	switch name {
	case "exit":
		code, _ := strconv.Atoi(rest[0])
		return code
	case "sleep":
		ready(dir, "sleep-"+strconv.Itoa(os.Getpid()))
		return sleep()
	case "limited":
		// Run inside a budget (TestLimitsEnforced): commits 512 MB at
		// once, then starts sleepers until one is refused.
		if _, err := windows.VirtualAlloc(0, 512<<20, windows.MEM_COMMIT|windows.MEM_RESERVE, windows.PAGE_READWRITE); err != nil {
			fmt.Println("alloc:refused")
		} else {
			fmt.Println("alloc:allowed")
		}
		for range 5 {
			if _, err := spawn(tag, "sleep", 0, dir); err != nil {
				fmt.Println("spawn:refused")
				break
			}
			fmt.Println("spawn:allowed")
		}
		return 0
	case "polite":
		// Exits on the polite stop (Go turns CTRL_BREAK into os.Interrupt).
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		ready(dir, "polite")
		<-ch
		return 3
	case "child":
		if _, err := spawn(tag, "sleep", 0, dir); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			return 1
		}
		return then()
	case "grandchild":
		// A child that starts the sleeper and stays.
		if _, err := spawn(tag, "child", 0, dir, "stay"); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
			return 1
		}
		return then()
	case "spawn-exit":
		// A child that starts the sleeper in a process group of its own
		// and exits at once: the sleeper's parent is gone.
		if _, err := spawn(tag, "child", windows.CREATE_NEW_PROCESS_GROUP, dir); err != nil {
			fmt.Fprintln(os.Stderr, "spawn-exit:", err)
			return 1
		}
		return then()
	case "breakaway":
		// Tries to leave the job; the job denies breakaway.
		if c, err := spawn(tag, "sleep", windows.CREATE_BREAKAWAY_FROM_JOB, dir); err != nil {
			fmt.Println("breakaway: denied:", err)
		} else {
			fmt.Println("breakaway: allowed: pid", c.Process.Pid)
		}
		if _, err := spawn(tag, "sleep", 0, dir); err != nil {
			return 1
		}
		return then()
	case "tether":
		// tether itself, running helper rest[0] contained with the rest
		// of rest as its arguments; with "nested" first, from inside a
		// job of its own. Its receipt goes to dir/receipt.json.
		if rest[0] == "nested" {
			if err := enterJob(); err != nil {
				fmt.Fprintln(os.Stderr, "tether: outer job:", err)
				return 125
			}
			rest = rest[1:]
		}
		exe, _ := os.Executable()
		c := Command(exe, append([]string{tag, dir}, rest[1:]...)...)
		c.Env = append(helperEnviron(), helperEnv+"="+rest[0])
		c.Grace = -1
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "tether:", err)
			return 125
		}
		c.Wait()
		b, _ := c.Receipt().JSON()
		os.WriteFile(filepath.Join(dir, "receipt.json"), b, 0o644)
		return c.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
	return 2
}

// awaitReady waits for a sleeper's ready file in dir.
func awaitReady(dir string) {
	for range 3000 {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "sleep-") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// enterJob puts this process in a new job, as a CI runner does: the
// job a run creates is then nested in it. The handle is kept open for
// the life of the process.
func enterJob() error {
	j, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return err
	}
	return windows.AssignProcessToJobObject(j, windows.CurrentProcess())
}

// procTagged lists the Linux processes whose command line holds tag, as
// Linux sees them through Wine's Z: drive (Wine maps / there). ok is false
// where /proc cannot be read: then only Windows' view is checked.
func procTagged(tag string) (pids []string, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(tag)) {
			pids = append(pids, e.Name())
		}
	}
	return pids, true
}
