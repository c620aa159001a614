package identity

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAwaitExec: AwaitExec is true for a process that exec'd, false after
// its patience for one forked that never execs (a shell's subshell, the
// parent's image), and false at once for a zombie and for a pid that is
// gone.
func TestAwaitExec(t *testing.T) {
	// A subshell forked by sh, which runs sleep as its child and never
	// execs itself: PF_FORKNOEXEC stays set on it.
	sh := exec.Command("sh", "-c", "(sleep 1000; :) & echo $!; wait")
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := sh.StdoutPipe()
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-sh.Process.Pid, syscall.SIGKILL); sh.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	sub, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || sub < 1 {
		t.Fatalf("subshell pid %q: %v", line, err)
	}
	if !AwaitExec(sh.Process.Pid, time.Second) {
		t.Errorf("AwaitExec(sh %d) = false, want true: it exec'd sh", sh.Process.Pid)
	}
	t0 := time.Now()
	if AwaitExec(sub, 100*time.Millisecond) {
		st, _ := ReadStat(sub)
		t.Errorf("AwaitExec(subshell %d) = true, want false: it never exec'd (stat %+v)", sub, st)
	}
	if d := time.Since(t0); d < 100*time.Millisecond {
		t.Errorf("AwaitExec(subshell) gave up after %v, before its patience", d)
	}

	z := exec.Command("true")
	if err := z.Start(); err != nil {
		t.Fatal(err)
	}
	for st, _ := ReadStat(z.Process.Pid); st.State != 'Z'; st, _ = ReadStat(z.Process.Pid) {
		time.Sleep(time.Millisecond)
	}
	t0 = time.Now()
	if AwaitExec(z.Process.Pid, 10*time.Second) || time.Since(t0) > 5*time.Second {
		t.Errorf("AwaitExec(zombie) did not return false at once")
	}
	z.Wait()
	if AwaitExec(z.Process.Pid, 10*time.Second) {
		t.Errorf("AwaitExec(reaped pid) = true")
	}
}
