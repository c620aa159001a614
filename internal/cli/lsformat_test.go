package cli

import (
	"testing"

	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
	"github.com/tether-run/tether/session"
)

// TestLineFormat: placeholders take fields and fields of objects; a field
// a session leaves out is empty; lists are JSON; text around them stays.
func TestLineFormat(t *testing.T) {
	s := session.Status{Record: &registry.Record{Name: "web", Argv: []string{"sleep", "1"}, Exit: &receipt.Exit{Code: 3}}, State: "stopped", Procs: 2}
	for _, c := range []struct{ format, want string }{
		{"{{.name}}", "web"},
		{`{{ .name }}\t{{.state}}\n`, "web\tstopped\n"},
		{"[{{.exit.code}}] {{.procs}} {{.main_pid}}|{{.argv}}", `[3] 2 |["sleep","1"]`},
		{"{{.exit.nosuch}}-{{.owner_alive}}-", "--"},
		{"no placeholders", "no placeholders"},
	} {
		f, err := parseFormat(c.format)
		if err != nil {
			t.Errorf("parseFormat(%q) = %v", c.format, err)
			continue
		}
		if got, err := f.line(s); err != nil || string(got) != c.want {
			t.Errorf("%q: %q, %v; want %q", c.format, got, err, c.want)
		}
	}
	for _, bad := range []string{"{{.name", "}}", "{{name}}", "{{.}}", "{{.a..b}}", `{{printf "%d" .procs}}`, "{{.nosuch}}"} {
		if _, err := parseFormat(bad); err == nil {
			t.Errorf("parseFormat(%q) = nil error", bad)
		}
	}
}
