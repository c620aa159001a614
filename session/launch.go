//go:build linux || windows || darwin

package session

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/internal/supervisor"
)

// launch is a supervisor started for a session whose name is not yet
// claimed: it sets itself up (an exec'd process, the state dir, its own
// token and signals, then with the spec handed to it its scope, owner and
// log) while the client claims, and reads the record once its go comes
// on its stdin. Half a start's time is two Go processes' start-up in
// series; this runs them side by side.
type launch struct {
	cmd    *exec.Cmd
	goOn   *os.File // the write end of its stdin
	report *os.File // the read end of its report pipe
	exited chan struct{}
	log    string // the session's log, which it opens before the go
}

// spawnSupervisor starts `tether __supervise` for session o.Name in a
// session of its own, in o.Dir with the session's environment env.
func spawnSupervisor(reg *store.Registry, exe string, o Options, env []string) (*launch, error) {
	goRd, goWr, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer goRd.Close()
	rd, wr, err := os.Pipe()
	if err != nil {
		goWr.Close()
		return nil, err
	}
	// The name goes after "--": whatever it is, it is never a flag.
	cmd := &exec.Cmd{Path: exe, Args: supervisor.Args(exe, reg.Dir, o.Name), Env: env, Dir: o.Dir, Stdin: goRd}
	cmd, err = startDetached(cmd, wr)
	wr.Close()
	if err != nil {
		goWr.Close()
		rd.Close()
		return nil, &StartError{Code: 125, Err: fmt.Errorf("session: start supervisor %s: %w", exe, err)}
	}
	l := &launch{cmd: cmd, goOn: goWr, report: rd, exited: make(chan struct{}), log: reg.LogPath(o.Name, o.RunID)}
	// Reap the supervisor whenever it exits, so a long-lived caller
	// collects no zombies.
	go func() { reapSupervisor(cmd); close(l.exited) }()
	return l, nil
}

// abandon ends a supervisor whose start failed before the claim: its go
// pipe closes without the word, so it exits having touched nothing of
// the name's, and is waited for (killed if it has not exited within a
// second: it may be stuck opening the state dir or in a D-Bus call). It
// removes the log it made itself; one that was killed (by this or
// anyone) could not, so what is left of it goes here: the log is this
// run's alone (NAME@RUNID), the name never claimed.
func (l *launch) abandon() {
	l.goOn.Close()
	l.report.Close()
	select {
	case <-l.exited:
	case <-time.After(time.Second):
		l.cmd.Process.Kill()
		<-l.exited
	}
	for _, p := range store.LogFiles(l.log) {
		os.Remove(p)
	}
}

// handOff gives the supervisor the session's spec (spec.json's bytes).
// A supervisor that cannot take it has exited: the start fails, and
// abandon collects it.
func (l *launch) handOff(spec []byte) error {
	if err := supervisor.SendSpec(l.goOn, spec); err != nil {
		return &StartError{Code: 125, Err: fmt.Errorf("%w: the spec could not be handed to it: %w", ErrSupervisor, err)}
	}
	return nil
}

// await tells the supervisor to go on, the name claimed and the record
// written, and waits for its one-line report.
func (l *launch) await(ctx context.Context, reg *store.Registry, o Options) error {
	defer l.report.Close()
	werr := supervisor.SendGo(l.goOn)
	l.goOn.Close()
	// DefaultReadyTimeout bounds the wait unless ctx ends it first.
	timeout := DefaultReadyTimeout
	var bound <-chan time.Time
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > timeout {
		t := time.NewTimer(timeout)
		defer t.Stop()
		bound = t.C
	}
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		// One line; a descendant that inherited the pipe by mistake must
		// not delay the report until it exits.
		b, err := bufio.NewReader(io.LimitReader(l.report, 1<<16)).ReadBytes('\n')
		got <- result{b, err}
	}()
	var res result
	var why error
	select {
	case res = <-got:
	case <-ctx.Done():
		why = fmt.Errorf("%w: no report from the supervisor of %q before %w", ErrSupervisor, o.Name, ctx.Err())
	case <-bound:
		why = fmt.Errorf("%w: no report from the supervisor of %q within %s", ErrSupervisor, o.Name, timeout)
	}
	if why != nil {
		// It may yet start the command: end it before the caller releases
		// what it would use. SIGKILL cannot be caught; the wait is bounded
		// only against a process stuck in the kernel.
		l.cmd.Process.Kill()
		select {
		case <-l.exited:
		case <-time.After(time.Minute):
			return &StartError{Code: 125, Err: fmt.Errorf("%w, and it did not die of SIGKILL", why)}
		}
		return &StartError{Code: 125, Err: fmt.Errorf("%w; its supervisor was killed", why)}
	}
	var ready sessionctl.ReadyReport
	if err := json.Unmarshal(res.b, &ready); err != nil {
		goErr := ""
		if werr != nil {
			goErr = " (its go: " + werr.Error() + ")"
		}
		return &StartError{Code: 125, Err: fmt.Errorf("%w: %q %s without a report%s%s", ErrSupervisor, o.Name, supervisorEnd(l.cmd, l.exited), goErr, seeLog(reg.LogPath(o.Name, o.RunID)))}
	}
	if !ready.OK {
		return &StartError{Code: ready.Code, Err: errors.New(ready.Error), Refusal: ready.Refusal}
	}
	return nil
}

// supervisorEnd says how a supervisor that sent no report ended: its exit
// status once it has exited (it closed the pipe, so it is exiting).
func supervisorEnd(cmd *exec.Cmd, exited <-chan struct{}) string {
	select {
	case <-exited:
		return "exited (" + cmd.ProcessState.String() + ")"
	case <-time.After(time.Second):
		return "closed its report pipe"
	}
}

// seeLog points at the session's log only when there is one: a supervisor
// that failed before opening it left none (issue 15).
func seeLog(path string) string {
	if _, err := os.Lstat(path); err != nil {
		return ""
	}
	return " (see " + path + ")"
}
