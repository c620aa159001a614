package session

import (
	"errors"
	"testing"
)

// TestParseCheck: each kind of readiness check parses, tcp's HOST
// defaults to localhost, and a malformed one is a usage error naming
// --ready.
func TestParseCheck(t *testing.T) {
	for _, c := range []struct {
		spec, kind, arg string
	}{
		{"tcp:8080", "tcp", "localhost:8080"},
		{"tcp:127.0.0.1:5432", "tcp", "127.0.0.1:5432"},
		{"tcp:[::1]:80", "tcp", "[::1]:80"},
		{"tcp:http", "tcp", "localhost:http"},
		{"unix:$TETHER_SESSION_DIR/s.sock", "unix", "$TETHER_SESSION_DIR/s.sock"},
		{"file:ready", "file", "ready"},
		{"log:listening on :[0-9]+", "log", "listening on :[0-9]+"},
		{"exec:curl -sf localhost:8080/health", "exec", "curl -sf localhost:8080/health"},
	} {
		ch, err := parseCheck(c.spec)
		if err != nil || ch.kind != c.kind || ch.arg != c.arg {
			t.Errorf("parseCheck(%q) = %+v, %v; want %s %q", c.spec, ch, err, c.kind, c.arg)
		}
	}
	for _, bad := range []string{"", "tcp", "tcp:", "tcp:99999999", "tcp:host:", "log:(", "udp:53", "file", "http://x"} {
		if _, err := parseCheck(bad); !errors.Is(err, ErrBadOptions) {
			t.Errorf("parseCheck(%q) = %v, want ErrBadOptions", bad, err)
		}
	}
}
