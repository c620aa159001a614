package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

func (t *tools) register(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "run", Description: "Run a command contained and wait for it (at most timeout, and at most 50 s per call): returns its exit code, its output's tail, and how many processes it left behind that were stopped. Everything it started is stopped when it ends, with a confirmed receipt. A run still going when the call returns goes on as a session (name in the result): poll it with wait, logs or status; stop ends it."}, t.run)
	mcp.AddTool(s, &mcp.Tool{Name: "start", Description: "Start a long-lived command (dev server, database, browser) as a named session and return once it is ready: ready checks are tcp:[HOST:]PORT, unix:PATH, file:PATH, log:REGEX, exec:CMD (all must hold). If they do not hold in ready_timeout, or it exits first, it is stopped and the error says why, with its log's last lines. Stopped when this MCP server ends, unless keep is true (then it needs a ttl or a stop)."}, t.start)
	mcp.AddTool(s, &mcp.Tool{Name: "list", Description: "List the sessions: name, state, pid, processes, memory, command."}, t.list)
	mcp.AddTool(s, &mcp.Tool{Name: "status", Description: "One session's state, processes (a tree), memory, owner, exit and stop reason once ended."}, t.status)
	mcp.AddTool(s, &mcp.Tool{Name: "logs", Description: "A session's output (stdout and stderr interleaved), its last lines: tail lines (default 200), since a duration (10m) or time, lines matching grep (a regular expression). Bounded to 32 KiB: the tail is kept and what was dropped is said."}, t.logs)
	mcp.AddTool(s, &mcp.Tool{Name: "exec", Description: "Run a command inside a running session (its cgroup, its environment: TMPDIR, TETHER_SESSION_DIR), e.g. tmux ls or a CLI that reaches the session's daemon; returns its exit code and output. What it starts belongs to the session."}, t.exec)
	mcp.AddTool(s, &mcp.Tool{Name: "stop", Description: "Stop a session and everything in it: its stop signal, a grace (default the session's own; 0s: none), then SIGKILL; returns the receipt's summary: what was stopped, and whether the kernel confirmed the group empty."}, t.stop)
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "Wait until a session ends (at most timeout, and at most 50 s per call): returns whether it ended, its exit code and stop reason."}, t.wait)
}

// toolError is a tool result an agent can act on: what went wrong, and
// what to do.
func toolError(format string, a ...any) (*mcp.CallToolResult, error) {
	r := &mcp.CallToolResult{IsError: true}
	r.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}
	return r, nil
}

// text is a result whose text is s (the structured output goes beside).
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// environ is the server's environment with env (KEY=VALUE) over it.
func environ(env []string) ([]string, error) {
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("env %q: want KEY=VALUE", kv)
		}
	}
	return append(os.Environ(), env...), nil
}

// RunIn is the run tool's input.
type RunIn struct {
	Command []string `json:"command" jsonschema:"the command and its arguments, e.g. [\"go\", \"test\", \"./...\"]"`
	Timeout string   `json:"timeout,omitempty" jsonschema:"stop the command and everything it started after this long (30s, 10m); default: none"`
	Cwd     string   `json:"cwd,omitempty" jsonschema:"working directory (default: the server's)"`
	Env     []string `json:"env,omitempty" jsonschema:"environment variables as KEY=VALUE, set over the server's environment"`
}

// RunOut is the run tool's result.
type RunOut struct {
	Name          string `json:"name" jsonschema:"the session the command runs as"`
	Ended         bool   `json:"ended" jsonschema:"false: still running when the call returned; poll with wait"`
	ExitCode      *int   `json:"exit_code,omitempty" jsonschema:"the command's exit code (124: its timeout stopped it)"`
	StopReason    string `json:"stop_reason,omitempty"`
	Stragglers    int    `json:"stragglers" jsonschema:"processes it left behind, stopped with it"`
	StopConfirmed bool   `json:"stop_confirmed" jsonschema:"the kernel confirmed that nothing of it is left"`
	Receipt       string `json:"receipt,omitempty" jsonschema:"path of its JSON receipt"`
	Output        string `json:"output" jsonschema:"the tail of its stdout and stderr, interleaved"`
	OutputDropped int64  `json:"output_dropped,omitempty" jsonschema:"bytes of output dropped before the tail"`
}

func (t *tools) run(ctx context.Context, _ *mcp.CallToolRequest, in RunIn) (*mcp.CallToolResult, RunOut, error) {
	var out RunOut
	if len(in.Command) == 0 {
		r, err := toolError("command is empty: give the command and its arguments as a list, e.g. [\"make\", \"test\"]")
		return r, out, err
	}
	timeout, err := duration("timeout", in.Timeout, 0)
	if err != nil {
		r, err := toolError("%v", err)
		return r, out, err
	}
	env, err := environ(in.Env)
	if err != nil {
		r, err := toolError("%v", err)
		return r, out, err
	}
	o := session.Options{Name: "run-" + randid.Hex(4), Argv: in.Command, Dir: in.Cwd, Env: env, Owner: t.owner, TTL: timeout, Grace: 2 * time.Second}
	sctx, scancel := capped(ctx, 0)
	rec, err := t.client.Start(sctx, o)
	scancel()
	if err != nil {
		r, err := toolError("run %q could not start: %v", strings.Join(in.Command, " "), err)
		return r, out, err
	}
	out.Name = rec.Name
	wait := MaxCall
	if timeout > 0 {
		wait = timeout + 5*time.Second // its stop, after the timeout
	}
	wctx, cancel := capped(ctx, wait)
	defer cancel()
	if rec, err = t.client.Wait(wctx, rec.Name); err == nil {
		out.Ended = true
		out.fill(t.client, rec)
	}
	tl := newTail(MaxOutput)
	t.client.Logs(ctx, out.Name, tl, session.LogOptions{Tail: -1})
	out.Output, out.OutputDropped = tl.text()
	if !out.Ended {
		return text(fmt.Sprintf("still running after %s as session %s: poll it with wait, logs or status; stop ends it\n%s", MaxCall, out.Name, out.Output)), out, nil
	}
	return text(fmt.Sprintf("exit %d; %d left-behind processes stopped; stop confirmed: %t\n%s", *out.ExitCode, out.Stragglers, out.StopConfirmed, out.Output)), out, nil
}

// fill sets what an ended session's record and receipt say.
func (o *RunOut) fill(client *session.Client, rec *registry.Record) {
	code := -1
	if rec.Exit != nil {
		code = rec.Exit.Code
	}
	o.ExitCode, o.StopReason, o.Receipt = &code, rec.StopReason, rec.Receipt
	if r, err := client.Receipt(rec); err == nil {
		o.Stragglers, o.StopConfirmed = r.StragglersTotal, r.StopConfirmed
		if r.TimedOut || rec.StopReason == "ttl" {
			code = 124
		}
	}
}

// StartIn is the start tool's input.
type StartIn struct {
	Command      []string `json:"command" jsonschema:"the command and its arguments"`
	Name         string   `json:"name,omitempty" jsonschema:"session name: 1-64 of A-Z a-z 0-9 . _ - (default: generated)"`
	Ready        []string `json:"ready,omitempty" jsonschema:"checks that must all hold before start returns: tcp:[HOST:]PORT, unix:PATH, file:PATH, log:REGEX, exec:CMD"`
	ReadyTimeout string   `json:"ready_timeout,omitempty" jsonschema:"how long the checks may take (default 45s; at most 50s)"`
	TTL          string   `json:"ttl,omitempty" jsonschema:"stop the session after this long (default: never)"`
	Keep         bool     `json:"keep,omitempty" jsonschema:"keep the session after this MCP server ends (then give a ttl, or stop it)"`
	Cwd          string   `json:"cwd,omitempty"`
	Env          []string `json:"env,omitempty" jsonschema:"environment variables as KEY=VALUE, set over the server's environment"`
	Profile      string   `json:"profile,omitempty" jsonschema:"tmux or playwright: that daemon's socket dirs in the session's own dir"`
	Until        string   `json:"until,omitempty" jsonschema:"when the session ends by itself: main-exit (when the command exits), or empty (when its last process exits: for a command that starts a daemon and returns, like tmux new -d, playwright-cli open or a server run with its --daemon flag). Default: main-exit, or empty with a profile"`
}

// SessionOut names a session and its state.
type SessionOut struct {
	Name  string `json:"name"`
	State string `json:"state"`
	PID   int    `json:"pid,omitempty" jsonschema:"the main process"`
	Owner string `json:"owner"`
	Log   string `json:"log" jsonschema:"the log file (read it with logs)"`
}

func (t *tools) start(ctx context.Context, _ *mcp.CallToolRequest, in StartIn) (*mcp.CallToolResult, SessionOut, error) {
	var out SessionOut
	if len(in.Command) == 0 {
		r, err := toolError("command is empty: give the command and its arguments as a list")
		return r, out, err
	}
	rt, err := duration("ready_timeout", in.ReadyTimeout, MaxCall-5*time.Second)
	if err == nil && rt > MaxCall-5*time.Second {
		err = fmt.Errorf("ready_timeout %s: at most %s per call", rt, MaxCall-5*time.Second)
	}
	var ttl time.Duration
	if err == nil {
		ttl, err = duration("ttl", in.TTL, 0)
	}
	var env []string
	if err == nil {
		env, err = environ(in.Env)
	}
	if err == nil {
		err = session.ParseReady(in.Ready)
	}
	if err != nil {
		r, err := toolError("%v", err)
		return r, out, err
	}
	o := session.Options{Name: in.Name, Argv: in.Command, Dir: in.Cwd, Env: env, Owner: t.owner, TTL: ttl,
		Ready: in.Ready, ReadyTimeout: rt, Profile: in.Profile, Until: in.Until}
	if in.Keep {
		o.Owner = "none"
	}
	ctx, cancel := capped(ctx, 0)
	defer cancel()
	rec, err := t.client.Start(ctx, o)
	var nr *session.NotReadyError
	switch {
	case errors.As(err, &nr):
		r, err := toolError("%v\nits log's last lines:\n%s", nr, strings.Join(nr.LogTail, "\n"))
		return r, out, err
	case errors.Is(err, registry.ErrExists):
		r, err := toolError("%v: choose another name, or stop it first", err)
		return r, out, err
	case err != nil:
		r, err := toolError("start %q: %v", strings.Join(in.Command, " "), err)
		return r, out, err
	}
	out = sessionOut(session.StatusOf(rec))
	how := "stopped when this MCP server ends"
	if in.Keep {
		how = "kept after this MCP server ends"
	}
	return text(fmt.Sprintf("session %s %s (pid %d), %s", out.Name, out.State, out.PID, how)), out, nil
}

func sessionOut(s session.Status) SessionOut {
	return SessionOut{Name: s.Name, State: s.State, PID: s.MainPID, Owner: s.Owner, Log: s.Log}
}

// ListIn is the list tool's input.
type ListIn struct {
	All bool `json:"all,omitempty" jsonschema:"include ended sessions"`
}

// ListEntry is one session in list's result.
type ListEntry struct {
	Name        string   `json:"name"`
	State       string   `json:"state"`
	PID         int      `json:"pid,omitempty"`
	Procs       int      `json:"procs"`
	MemoryBytes int64    `json:"memory_bytes"`
	AgeMS       int64    `json:"age_ms"`
	Command     []string `json:"command"`
}

// ListOut is the list tool's result.
type ListOut struct {
	Sessions []ListEntry `json:"sessions"`
}

func (t *tools) list(_ context.Context, _ *mcp.CallToolRequest, in ListIn) (*mcp.CallToolResult, ListOut, error) {
	out := ListOut{Sessions: []ListEntry{}}
	sts, _ := t.client.List()
	var b strings.Builder
	for _, s := range sts {
		if !in.All && !s.Live() {
			continue
		}
		out.Sessions = append(out.Sessions, ListEntry{Name: s.Name, State: s.State, PID: s.MainPID, Procs: s.Procs, MemoryBytes: s.MemoryBytes, AgeMS: s.AgeMS, Command: s.Argv})
		fmt.Fprintf(&b, "%s\t%s\tpid %d\t%d procs\t%s\n", s.Name, s.State, s.MainPID, s.Procs, strings.Join(s.Argv, " "))
		if b.Len() > MaxOutput {
			break
		}
	}
	if len(out.Sessions) == 0 {
		return text("no sessions"), out, nil
	}
	return text(b.String()), out, nil
}

// NameIn names a session.
type NameIn struct {
	Name string `json:"name" jsonschema:"the session's name"`
}

func (t *tools) status(_ context.Context, _ *mcp.CallToolRequest, in NameIn) (*mcp.CallToolResult, session.Status, error) {
	s, err := t.client.Status(in.Name)
	if err != nil {
		r, err := toolError("%v (list shows the sessions)", err)
		return r, session.Status{}, err
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	if len(b) > MaxOutput {
		s.Processes = s.Processes[:min(len(s.Processes), 100)]
		b, _ = json.MarshalIndent(s, "", "  ")
	}
	return text(string(b)), s, nil
}

// LogsIn is the logs tool's input.
type LogsIn struct {
	Name  string `json:"name"`
	Tail  int    `json:"tail,omitempty" jsonschema:"the last N lines (default 200; -1: all, bounded to 32 KiB)"`
	Since string `json:"since,omitempty" jsonschema:"only lines newer than this: a duration (10m) or an RFC 3339 time"`
	Grep  string `json:"grep,omitempty" jsonschema:"only lines matching this regular expression"`
	Run   string `json:"run,omitempty" jsonschema:"an earlier run of the name: its run id or a prefix only one run has (default: the newest)"`
}

// TextOut is a bounded text result.
type TextOut struct {
	Text    string `json:"text"`
	Dropped int64  `json:"dropped,omitempty" jsonschema:"bytes dropped before the text kept"`
}

func (t *tools) logs(ctx context.Context, _ *mcp.CallToolRequest, in LogsIn) (*mcp.CallToolResult, TextOut, error) {
	var out TextOut
	o := session.LogOptions{Tail: in.Tail, Run: in.Run}
	if o.Tail == 0 {
		o.Tail = 200
	}
	if in.Since != "" {
		if d, err := time.ParseDuration(in.Since); err == nil {
			o.Since = time.Now().Add(-d)
		} else if ts, err := time.Parse(time.RFC3339Nano, in.Since); err == nil {
			o.Since = ts
		} else {
			r, err := toolError("since %q: want a duration (10m) or an RFC 3339 time", in.Since)
			return r, out, err
		}
	}
	var re *regexp.Regexp
	if in.Grep != "" {
		var err error
		if re, err = regexp.Compile(in.Grep); err != nil {
			r, err := toolError("grep %q: %v", in.Grep, err)
			return r, out, err
		}
		if in.Tail == 0 {
			o.Tail = -1 // grep the whole log, keep the tail of the matches
		}
	}
	tl := newTail(MaxOutput)
	var w io.Writer = tl
	if re != nil {
		w = &grepWriter{re: re, w: tl}
	}
	ctx, cancel := capped(ctx, 0)
	defer cancel()
	if err := t.client.Logs(ctx, in.Name, w, o); err != nil {
		r, err := toolError("%v", err)
		return r, out, err
	}
	if g, ok := w.(*grepWriter); ok {
		g.flush()
	}
	out.Text, out.Dropped = tl.text()
	return text(out.Text), out, nil
}

// ExecIn is the exec tool's input.
type ExecIn struct {
	Name    string   `json:"name"`
	Command []string `json:"command" jsonschema:"the command and its arguments, run inside the session"`
	Timeout string   `json:"timeout,omitempty" jsonschema:"kill the command (not what it started) after this long (default and at most 50s)"`
}

// ExecOut is the exec tool's result.
type ExecOut struct {
	ExitCode      int    `json:"exit_code"`
	Output        string `json:"output"`
	OutputDropped int64  `json:"output_dropped,omitempty"`
}

func (t *tools) exec(ctx context.Context, _ *mcp.CallToolRequest, in ExecIn) (*mcp.CallToolResult, ExecOut, error) {
	var out ExecOut
	d, err := duration("timeout", in.Timeout, 0)
	if err == nil && len(in.Command) == 0 {
		err = errors.New("command is empty: give the command and its arguments as a list")
	}
	if err != nil {
		r, err := toolError("%v", err)
		return r, out, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		r, err := toolError("%v", err)
		return r, out, err
	}
	tl := newTail(MaxOutput)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			tl.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	ctx, cancel := capped(ctx, d)
	defer cancel()
	ex, err := t.client.Exec(ctx, in.Name, session.ExecOptions{Argv: in.Command, Stdout: pw, Stderr: pw})
	pw.Close()
	<-copied
	pr.Close()
	out.ExitCode = ex.Code
	out.Output, out.OutputDropped = tl.text()
	if err != nil {
		r, err := toolError("exec in %s: %v\n%s", in.Name, err, out.Output)
		return r, out, err
	}
	return text(fmt.Sprintf("exit %d\n%s", ex.Code, out.Output)), out, nil
}

// StopIn is the stop tool's input.
type StopIn struct {
	Name  string `json:"name"`
	Grace string `json:"grace,omitempty" jsonschema:"how long members get after the stop signal before SIGKILL (default: the session's own; 0s: none)"`
}

// StopOut summarizes a stop's receipt.
type StopOut struct {
	Name          string `json:"name"`
	StopConfirmed bool   `json:"stop_confirmed" jsonschema:"the kernel confirmed the group empty and every member gone"`
	Reason        string `json:"reason"`
	MembersSeen   int    `json:"members_seen"`
	KillUsed      bool   `json:"kill_used" jsonschema:"some members did not exit on the stop signal and were killed"`
	ExitCode      int    `json:"exit_code"`
	Receipt       string `json:"receipt,omitempty" jsonschema:"path of the JSON receipt"`
}

func (t *tools) stop(ctx context.Context, _ *mcp.CallToolRequest, in StopIn) (*mcp.CallToolResult, StopOut, error) {
	out := StopOut{Name: in.Name}
	o := session.StopOptions{}
	if in.Grace != "" {
		g, err := duration("grace", in.Grace, 0)
		if err != nil {
			r, err := toolError("%v", err)
			return r, out, err
		}
		o.Grace = g
		if g == 0 {
			o.Grace = -1
		}
	}
	ctx, cancel := capped(ctx, 0)
	defer cancel()
	r, err := t.client.Stop(ctx, in.Name, o)
	if err != nil {
		res, err := toolError("stop %s: %v", in.Name, err)
		return res, out, err
	}
	out.StopConfirmed, out.Reason, out.MembersSeen, out.KillUsed, out.ExitCode = r.StopConfirmed, r.Stop.Reason, r.Evidence.MembersSeen, r.Evidence.KillUsed, r.Exit.Code
	if s, err := t.client.Status(in.Name); err == nil {
		out.Receipt = s.Receipt
	}
	return text(fmt.Sprintf("stopped %s: %d processes, kill used: %t, confirmed: %t", in.Name, out.MembersSeen, out.KillUsed, out.StopConfirmed)), out, nil
}

// WaitIn is the wait tool's input.
type WaitIn struct {
	Name    string `json:"name"`
	Timeout string `json:"timeout,omitempty" jsonschema:"how long to wait (default and at most 50s)"`
}

// WaitOut is the wait tool's result.
type WaitOut struct {
	Ended      bool   `json:"ended"`
	State      string `json:"state"`
	ExitCode   *int   `json:"exit_code,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
}

func (t *tools) wait(ctx context.Context, _ *mcp.CallToolRequest, in WaitIn) (*mcp.CallToolResult, WaitOut, error) {
	var out WaitOut
	d, err := duration("timeout", in.Timeout, 0)
	if err != nil {
		r, err := toolError("%v", err)
		return r, out, err
	}
	ctx, cancel := capped(ctx, d)
	defer cancel()
	rec, err := t.client.Wait(ctx, in.Name)
	if err != nil {
		if s, serr := t.client.Status(in.Name); serr == nil && ctx.Err() != nil {
			out.State = s.State
			return text(fmt.Sprintf("%s is still %s", in.Name, s.State)), out, nil
		}
		r, err := toolError("wait %s: %v", in.Name, err)
		return r, out, err
	}
	out.Ended, out.State, out.StopReason = true, rec.State, rec.StopReason
	if rec.Exit != nil {
		out.ExitCode = &rec.Exit.Code
	}
	return text(fmt.Sprintf("%s ended: %s", in.Name, rec.StopReason)), out, nil
}

// grepWriter passes on the whole lines that match re.
type grepWriter struct {
	re   *regexp.Regexp
	w    io.Writer
	line []byte
}

func (g *grepWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n') // not string(p): a copy of the rest for every line
		if i < 0 {
			g.line = append(g.line, p...)
			break
		}
		g.line = append(g.line, p[:i+1]...)
		if g.re.Match(g.line[:len(g.line)-1]) { // the line without its newline: $ is its end
			g.w.Write(g.line)
		}
		g.line = g.line[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (g *grepWriter) flush() {
	if len(g.line) > 0 && g.re.Match(g.line) {
		g.w.Write(g.line)
	}
	g.line = nil
}
