package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tether-run/tether/session"
	"github.com/tether-run/tether/version"
)

// MaxCall bounds how long a tool call takes, below agent clients' own
// limits (often 60 s or more): a call that would wait longer returns what
// is true then, and says how to go on.
const MaxCall = 50 * time.Second

// tools is what the handlers share: the registry's client, and the owner
// of the sessions they start.
type tools struct {
	client *session.Client
	owner  string // this server's pid: its death stops what it started
}

// New returns the server, its tools bound to client.
func New(client *session.Client) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "tether", Title: "tether: every process has an owner", Version: version.Get().Version}, &mcp.ServerOptions{
		Instructions: instructions,
	})
	t := &tools{client: client, owner: strconv.Itoa(os.Getpid())}
	t.register(s)
	return s
}

const instructions = `tether runs commands contained: each in a cgroup of its own, so that everything it starts — daemons, double-forked and setsid'd children included — is stopped with it, and the stop is confirmed.
Use run for a command that ends (tests, builds): it returns its exit code and output, and stops whatever it left behind.
Use start for a server the agent needs while it works (dev servers, databases, browsers): give ready (tcp:PORT, log:REGEX, ...) so that it is usable when start returns. Sessions started here are stopped when this MCP server ends, unless started with keep.
Then logs, status, exec (a command inside the session), stop (with a receipt), list, wait.`

// Run serves one client on in and out (the stdio transport's) until it
// goes away.
func Run(ctx context.Context, client *session.Client, in io.ReadCloser, out io.WriteCloser) error {
	err := New(client).Run(ctx, &mcp.IOTransport{Reader: in, Writer: out})
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// duration parses a duration argument ("30s", "2m"); "" is def.
func duration(name, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q: want a duration such as 30s or 2m", name, s)
	}
	return d, nil
}

// capped is ctx bounded by d (0: MaxCall), never beyond MaxCall.
func capped(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 || d > MaxCall {
		d = MaxCall
	}
	return context.WithTimeout(ctx, d)
}
