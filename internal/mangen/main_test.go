package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/tether-run/tether/internal/cli"
)

// TestManPages generates the pages and checks that every command a user
// can call has one, with its synopsis and examples.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatalf("generate: %v", err)
	}
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		n++
		page := filepath.Join(dir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		b, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("%s: no man page: %v", c.CommandPath(), err)
			return
		}
		for _, want := range []string{".SH NAME", ".SH SYNOPSIS", ".SH EXAMPLE"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: %s has no %s", c.CommandPath(), page, want)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(cli.Command())
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if n < 12 || len(pages) != n {
		t.Errorf("%d pages for %d commands, want one each (and at least 12)", len(pages), n)
	}
	for _, p := range pages {
		if strings.Contains(p, "__") {
			t.Errorf("page %s for a hidden command", p)
		}
	}
}
