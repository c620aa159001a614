package mcpserver

import (
	"testing"

	"github.com/tether-run/tether/session"
)

// TestNew: every tool registers (the SDK panics at AddTool on a schema
// it cannot infer from the Go types).
func TestNew(t *testing.T) {
	if New(&session.Client{}) == nil {
		t.Fatal("New returned nil")
	}
}
