// Command gostart is the Go floor of `tether start`: the least any
// design pays whose session supervisor is a fresh child of the start, as
// tether's must be (it inherits its caller's context). A client re-executes
// itself as the supervisor, which spawns the command in a process group
// of its own, writes its pid to a file and reports over a pipe; the client
// exits once it has the report. No cgroup, no record, no claim, no log.
//
// It takes tether's own words so that bench/phases.py can time it beside
// tether: `gostart start [-q] --name N [--owner none] -- CMD...` and
// `gostart stop N` (the pid files are in $XDG_RUNTIME_DIR). With
// $TETHER_MARKS set it marks its steps there as a tether built with
// bench/testdata/issue30-marks.patch does.
package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// marks is $TETHER_MARKS, opened, or nil.
var marks *os.File

// mark appends "name CLOCK_MONOTONIC-ns" to $TETHER_MARKS.
func mark(name string) {
	if marks == nil {
		return
	}
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	fmt.Fprintf(marks, "%s %d\n", name, ts.Nano())
}

func main() {
	if p := os.Getenv("TETHER_MARKS"); p != "" {
		marks, _ = os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	}
	if len(os.Args) < 3 {
		fail("usage: gostart start --name N -- CMD... | gostart stop N")
	}
	switch os.Args[1] {
	case "start":
		mark("main")
		start(os.Args[2:])
		mark("exit")
	case "stop":
		b, err := os.ReadFile(pidFile(os.Args[2]))
		if err != nil {
			fail(err.Error())
		}
		pid, _ := strconv.Atoi(string(b))
		syscall.Kill(-pid, syscall.SIGKILL)
		os.Remove(pidFile(os.Args[2]))
	case "__supervise":
		supervise(os.Args[2], os.Args[3:])
	default:
		fail("unknown command " + os.Args[1])
	}
}

// start spawns the supervisor and waits for its report.
func start(args []string) {
	name := ""
	for i, a := range args {
		if a == "--name" && i+1 < len(args) {
			name = args[i+1]
		}
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		fail(err.Error())
	}
	cmd := exec.Command("/proc/self/exe", append([]string{"__supervise", name}, args...)...)
	cmd.Args[0] = "gostart"
	cmd.ExtraFiles = []*os.File{wr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		fail(err.Error())
	}
	mark("c.spawned")
	wr.Close()
	line, err := bufio.NewReader(rd).ReadString('\n')
	if err != nil || line != "ok\n" {
		fail(fmt.Sprintf("supervisor: %q %v", line, err))
	}
	mark("gotreport")
	fmt.Printf("started %s\n", name)
}

// supervise starts argv, records its pid, reports and waits for it.
func supervise(name string, argv []string) {
	mark("s.main")
	report := os.NewFile(3, "report")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(report, "error %v\n", err)
		os.Exit(1)
	}
	mark("s.started")
	if err := os.WriteFile(pidFile(name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		fmt.Fprintf(report, "error %v\n", err)
		os.Exit(1)
	}
	report.WriteString("ok\n")
	report.Close()
	mark("s.reported")
	cmd.Wait()
}

func pidFile(name string) string {
	return filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "gostart-"+name+".pid")
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "gostart:", msg)
	os.Exit(2)
}
