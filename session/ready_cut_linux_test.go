package session

import (
	"context"
	"net"
	"strings"
	"testing"
)

// TestReadyLastSeenKept: what a check last saw is its last real try's —
// a try cut short by the end of the wait ("i/o timeout", seen in a
// starved VM guest) does not replace "connection refused".
func TestReadyLastSeenKept(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ch, err := parseCheck("tcp:" + addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &readiness{checks: []*check{ch}}
	if f := r.failing(context.Background()); len(f) != 1 || !strings.Contains(ch.last, "refused") {
		t.Fatalf("a closed port: failing %d, last %q; want it failing, connection refused", len(f), ch.last)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if f := r.failing(ctx); len(f) != 1 || !strings.Contains(ch.last, "refused") {
		t.Errorf("a try after the wait ended: failing %d, last %q; want still connection refused", len(f), ch.last)
	}
}
