package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/internal/watch"
)

// TestMain fails the run if a test leaves a process or a leaf behind.
func TestMain(m *testing.M) { os.Exit(leakcheck.Main(m)) }

// caseEnv marks the processes of one test: the server's environment,
// and so every session's.
const caseEnv = "TETHER_MCP_CASE"

// build builds tether and tether-mcp into one directory, as installed.
// Without a Go toolchain (the VM guests: a stand-in go that builds only
// reap's binary) the installed pair serves.
func build(t testing.TB) string {
	t.Helper()
	if err := exec.Command("go", "env", "GOROOT").Run(); err != nil {
		p, lerr := exec.LookPath("tether-mcp")
		if lerr != nil {
			t.Fatalf("no Go toolchain (%v) and no tether-mcp installed: %v", err, lerr)
		}
		return filepath.Dir(p)
	}
	dir := t.TempDir()
	for _, c := range []string{"tether", "tether-mcp"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, c), "github.com/tether-run/tether/cmd/"+c).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", c, err, out)
		}
	}
	return dir
}

// server starts `tether mcp` with its own state dir and connects the
// SDK's own client to it over the command transport.
func server(t *testing.T, bin, mark string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	xdg := t.TempDir()
	leakcheck.AwaitAtCleanup(t, watch.Env, filepath.Join(xdg, "tether")) // its watcher, before the dir goes
	os.Chmod(xdg, 0o700)
	cmd := exec.Command(filepath.Join(bin, "tether"), "mcp")
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+xdg, caseEnv+"="+mark, "TETHER_NO_REAP=1")
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "tether-test", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to tether mcp: %v", err)
	}
	return cs, cmd
}

// call calls tool with args and decodes its structured result into out.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any, out any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if out != nil && !r.IsError {
		b, _ := json.Marshal(r.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: structured content %s: %v", tool, b, err)
		}
	}
	return r
}

// textOf is a result's text content.
func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// awaitGone waits (a hang guard of 15 s, not a timing assertion: the
// time is returned) until no process carries mark.
func awaitGone(t *testing.T, mark string, server *exec.Cmd) time.Duration {
	t.Helper()
	t0 := time.Now()
	for time.Since(t0) < 15*time.Second {
		if len(leakcheck.Find(caseEnv, mark)) == 0 {
			return time.Since(t0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("still alive after 15s: %v", leakcheck.Find(caseEnv, mark))
	// Seen once in a full go test ./... (not reproduced): the server
	// was not among them, yet its session's supervisor had not seen it
	// die. Where was it?
	for _, f := range []string{"stat", "wchan", "stack"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", server.Process.Pid, f))
		t.Logf("server pid %d %s: %q %v", server.Process.Pid, f, b, err)
	}
	return time.Since(t0)
}

// TestMCP (issue 28) drives `tether mcp` as a real subprocess through the
// MCP SDK's own client: the tools and their schemas; run (a setsid'd
// daemon it leaves is stopped); start with ready tcp:PORT (the port
// answers the instant start returns); logs; exec; stop (receipt
// confirmed); a 10 MB output run (the result stays bounded); bad
// arguments (tool errors that say what to do); and closing the client's
// end with a session running (the session is stopped, nothing left).
func TestMCP(t *testing.T) {
	if os.Getuid() != 0 {
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
			t.Skip("needs root or a delegated cgroup v2")
		}
	}
	bin := build(t)
	mark := randid.Hex(8)
	cs, srv := server(t, bin, mark)
	defer cs.Close()

	t.Run("tools", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
				t.Errorf("tool %s: input schema %v, output schema %v, description %q; want all three", tool.Name, tool.InputSchema != nil, tool.OutputSchema != nil, tool.Description)
			}
		}
		slices.Sort(names)
		if want := []string{"exec", "list", "logs", "run", "start", "status", "stop", "wait"}; !slices.Equal(names, want) {
			t.Errorf("tools %v, want %v", names, want)
		}
	})

	t.Run("run", func(t *testing.T) {
		var out struct {
			Ended         bool   `json:"ended"`
			ExitCode      *int   `json:"exit_code"`
			Stragglers    int    `json:"stragglers"`
			StopConfirmed bool   `json:"stop_confirmed"`
			Output        string `json:"output"`
		}
		r := call(t, cs, "run", map[string]any{"command": []string{"sh", "-c", "setsid sleep 1000 & echo built; exit 3"}}, &out)
		if r.IsError || !out.Ended || out.ExitCode == nil || *out.ExitCode != 3 || out.Stragglers < 1 || !out.StopConfirmed || out.Output != "built\n" {
			t.Errorf("run = %+v (%s); want ended, exit 3, the setsid'd sleep stopped, confirmed, its output", out, textOf(r))
		}
	})

	t.Run("10 MB of output", func(t *testing.T) {
		var out struct {
			Output        string `json:"output"`
			OutputDropped int64  `json:"output_dropped"`
		}
		r := call(t, cs, "run", map[string]any{"command": []string{"sh", "-c", "head -c 10000000 /dev/zero | tr '\\0' a; echo; echo end"}}, &out)
		b, _ := json.Marshal(r)
		if len(b) > 70<<10 || out.OutputDropped < 9_000_000 || !strings.HasSuffix(out.Output, "end\n") || !strings.Contains(out.Output, "earlier bytes dropped") {
			t.Errorf("a 10 MB run: result %d bytes, %d dropped, output ends %q; want under 70 KiB, the tail kept, the drop said", len(b), out.OutputDropped, out.Output[max(0, len(out.Output)-20):])
		}
	})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	t.Run("start ready", func(t *testing.T) {
		var out struct {
			Name  string `json:"name"`
			State string `json:"state"`
		}
		py := fmt.Sprintf(`import socket,time,sys
print("booting", flush=True); time.sleep(0.4)
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", %d)); s.listen()
print("listening", flush=True)
for i in range(300): print("line", i, flush=True)
time.sleep(1000)`, port)
		r := call(t, cs, "start", map[string]any{"name": "web", "command": []string{"python3", "-c", py}, "ready": []string{"tcp:" + strconv.Itoa(port)}}, &out)
		if r.IsError || out.Name != "web" || out.State != "running" {
			t.Fatalf("start = %+v (%s)", out, textOf(r))
		}
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("the port right after start returned: %v", err)
		}
		c.Close()
	})

	t.Run("logs", func(t *testing.T) {
		var out struct {
			Text string `json:"text"`
		}
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.Text, "line 299") && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			call(t, cs, "logs", map[string]any{"name": "web", "tail": 3}, &out)
		}
		if out.Text != "line 297\nline 298\nline 299\n" {
			t.Errorf("logs tail 3 = %q", out.Text)
		}
		call(t, cs, "logs", map[string]any{"name": "web", "grep": "^(booting|listening)$"}, &out)
		if out.Text != "booting\nlistening\n" {
			t.Errorf("logs grep = %q", out.Text)
		}
	})

	t.Run("exec", func(t *testing.T) {
		var out struct {
			ExitCode int    `json:"exit_code"`
			Output   string `json:"output"`
		}
		r := call(t, cs, "exec", map[string]any{"name": "web", "command": []string{"sh", "-c", `echo "in $TETHER_SESSION"; exit 4`}}, &out)
		if r.IsError || out.ExitCode != 4 || out.Output != "in web\n" {
			t.Errorf("exec = %+v (%s)", out, textOf(r))
		}
	})

	t.Run("stop", func(t *testing.T) {
		var out struct {
			StopConfirmed bool   `json:"stop_confirmed"`
			Reason        string `json:"reason"`
			Receipt       string `json:"receipt"`
		}
		r := call(t, cs, "stop", map[string]any{"name": "web"}, &out)
		if r.IsError || !out.StopConfirmed || out.Reason != "request" || out.Receipt == "" {
			t.Errorf("stop = %+v (%s)", out, textOf(r))
		}
	})

	// A command that starts a daemon and returns: with until empty, or
	// a profile (whose default it is), the session lives on with the
	// daemon; with until main-exit, given or the default without a
	// profile, it ends with the command. The tmux case is the profile's
	// own command, as an agent would give it.
	t.Run("daemons", func(t *testing.T) {
		cases := []struct {
			name, profile, until string
			command              []string
			lives                bool
		}{
			{"d-empty", "", "empty", []string{"sh", "-c", "setsid sleep 1000 & exit 0"}, true},
			{"d-main", "", "", []string{"sh", "-c", "setsid sleep 1000 & exit 0"}, false},
			{"tm", "tmux", "", []string{"tmux", "new-session", "-d", "-s", "main", "sleep 1000"}, true},
			{"pw-main", "playwright", "main-exit", []string{"sh", "-c", "setsid sleep 1000 & exit 0"}, false},
		}
		for _, c := range cases {
			if c.profile == "tmux" {
				if _, err := exec.LookPath("tmux"); err != nil {
					t.Logf("%s not tried: no tmux (CI installs it)", c.name)
					continue
				}
			}
			var out struct{ State string }
			r := call(t, cs, "start", map[string]any{"name": c.name, "command": c.command, "profile": c.profile, "until": c.until}, &out)
			// One that ends with its command may be stopping already.
			if r.IsError || (c.lives && out.State != "running") {
				t.Fatalf("start %s = %+v (%s)", c.name, out, textOf(r))
			}
			var w struct {
				Ended      bool   `json:"ended"`
				StopReason string `json:"stop_reason"`
			}
			// One that lives is waited for 2 s; one that ends, until
			// it has (at most 30 s, a hang guard): its sh's start, exit
			// and stop could take longer than 2 s under TCG on a loaded
			// host.
			wait := "2s"
			if !c.lives {
				wait = "30s"
			}
			call(t, cs, "wait", map[string]any{"name": c.name, "timeout": wait}, &w)
			if w.Ended == c.lives {
				t.Errorf("%s (profile %q, until %q): ended %t (%s) %s after its command returned; want %t", c.name, c.profile, c.until, w.Ended, w.StopReason, wait, !c.lives)
			}
			if c.profile == "tmux" && c.lives {
				var e struct {
					ExitCode int `json:"exit_code"`
				}
				if r := call(t, cs, "exec", map[string]any{"name": c.name, "command": []string{"tmux", "has-session", "-t", "main"}}, &e); r.IsError || e.ExitCode != 0 {
					t.Errorf("%s: tmux has-session through exec = %d (%s); want 0: the server lives", c.name, e.ExitCode, textOf(r))
				}
			}
			var s struct {
				StopConfirmed bool `json:"stop_confirmed"`
			}
			if r := call(t, cs, "stop", map[string]any{"name": c.name}, &s); c.lives && (r.IsError || !s.StopConfirmed) {
				t.Errorf("stop %s = %+v (%s)", c.name, s, textOf(r))
			}
		}
	})

	t.Run("bad arguments", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"run", map[string]any{"command": []string{}}, "command is empty"},
			{"run", map[string]any{"command": []string{"true"}, "timeout": "soon"}, "want a duration"},
			{"start", map[string]any{"command": []string{"sleep", "1"}, "ready": []string{"http://x"}}, "tcp:[HOST:]PORT"},
			{"start", map[string]any{"command": []string{"sleep", "1"}, "until": "never"}, "want main-exit or empty"},
			{"stop", map[string]any{"name": "nosuch"}, "nosuch"},
			{"logs", map[string]any{"name": "nosuch"}, "nosuch"},
			{"logs", map[string]any{"name": "web", "run": "0000ffff"}, "0000ffff"},
		} {
			r := call(t, cs, c.tool, c.args, nil)
			if !r.IsError || !strings.Contains(textOf(r), c.want) {
				t.Errorf("%s %v = error %t %q; want a tool error saying %q", c.tool, c.args, r.IsError, textOf(r), c.want)
			}
		}
	})

	t.Run("client gone", func(t *testing.T) {
		var out struct{ Name string }
		if r := call(t, cs, "start", map[string]any{"name": "left", "command": []string{"sh", "-c", "setsid sleep 1000 & exec sleep 1000"}}, &out); r.IsError {
			t.Fatalf("start: %s", textOf(r))
		}
		cs.Close()
		took := awaitGone(t, mark, srv)
		t.Logf("the session was gone %s after the client closed its end", took.Round(time.Millisecond))
	})
}
