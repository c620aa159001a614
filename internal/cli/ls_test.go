package cli

import (
	"testing"
	"time"
)

func TestCommandText(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		max  int
		want string
	}{
		{"joined", []string{"sleep", "1000"}, 48, "sleep 1000"},
		{"C0 and DEL", []string{"a\nb\tc\x7fd"}, 48, "a b c d"},
		{"C1 (CSI) cannot reach the terminal", []string{"x\u009b31my"}, 48, "x 31my"},
		{"cut at max runes", []string{"héllo", "wörld"}, 6, "héllo…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := commandText(tt.argv, tt.max); got != tt.want {
				t.Errorf("commandText(%q, %d) = %q, want %q", tt.argv, tt.max, got, tt.want)
			}
		})
	}
}

func TestShort(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{5 * time.Second, "5s"}, {59 * time.Second, "59s"}, {2 * time.Minute, "2m"},
		{3 * time.Hour, "3h"}, {47 * time.Hour, "47h"}, {72 * time.Hour, "3d"},
	}
	for _, tt := range tests {
		if got := short(tt.in); got != tt.want {
			t.Errorf("short(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestLsFlags: ls's flags as parsed, --filter and --format included,
// without listing anything.
func TestLsFlags(t *testing.T) {
	checkFlags(t, "ls", ExitUsage, newLsCmdRun, []flagCase[lsOptions]{
		{[]string{}, &lsOptions{filter: lsFilter{}}, ""},
		{[]string{"-a", "-q", "--filter", "state=running", "--filter", "name=web-*", "--filter", "state=stopped"},
			&lsOptions{all: true, quiet: true, filter: lsFilter{"state": {"running", "stopped"}, "name": {"web-*"}}}, ""},
		{[]string{"--format", `{{.name}}\t{{.exit.code}}`}, &lsOptions{format: `{{.name}}\t{{.exit.code}}`,
			line: &lineFormat{lits: []string{"", "\t", ""}, paths: [][]string{{"name"}, {"exit", "code"}}}, filter: lsFilter{}}, ""},
		{[]string{"--format", "json", "--json"}, nil, "none of the others"},
		{[]string{"--format", "json"}, &lsOptions{format: "json", filter: lsFilter{}}, ""},
		{[]string{"--json", "-q"}, nil, "none of the others"},
		{[]string{"--filter", "color=red"}, nil, `--filter "color=red": no key "color"`},
		{[]string{"--format", "{{.name"}, nil, "--format"},
		{[]string{"web"}, nil, "unknown command"},
	})
}
