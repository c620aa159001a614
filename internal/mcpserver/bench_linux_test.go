package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tether-run/tether/internal/leakcheck"
	"github.com/tether-run/tether/internal/randid"
	"github.com/tether-run/tether/internal/watch"
)

// BenchmarkListRoundTrip: one MCP list call through a live `tether mcp`
// (three sessions listed), beside its peer, `tether ls --json` run as a
// process, in the same run (the machine is noisy: compare the two).
//
//	go test ./internal/mcpserver -run '^$' -bench ListRoundTrip -benchtime 200x
func BenchmarkListRoundTrip(b *testing.B) {
	bin := build(b)
	xdg := b.TempDir()
	leakcheck.AwaitAtCleanup(b, watch.Env, filepath.Join(xdg, "tether")) // its watcher, before the dir goes
	os.Chmod(xdg, 0o700)
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+xdg, caseEnv+"="+randid.Hex(8), "TETHER_NO_REAP=1")
	for _, n := range []string{"a", "b", "c"} {
		c := exec.Command(filepath.Join(bin, "tether"), "start", "-q", "--name", n, "--owner", "none", "--", "sleep", "1000")
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("start: %v %s", err, out)
		}
	}
	defer func() {
		c := exec.Command(filepath.Join(bin, "tether"), "stop", "--all")
		c.Env = env
		c.Run()
	}()
	cmd := exec.Command(filepath.Join(bin, "tether"), "mcp")
	cmd.Env = env
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.Run("mcp-list", func(b *testing.B) {
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list", Arguments: map[string]any{}})
			cancel()
			if err != nil || r.IsError {
				b.Fatalf("list: %v %v", err, r)
			}
		}
	})
	b.Run("tether-ls-json", func(b *testing.B) {
		for b.Loop() {
			c := exec.Command(filepath.Join(bin, "tether"), "ls", "--json")
			c.Env = env
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
