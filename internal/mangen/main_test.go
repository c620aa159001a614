package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// thLine returns the .TH line of the page at path.
func thLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, ".TH ") {
			return l
		}
	}
	t.Fatalf("%s has no .TH line", path)
	return ""
}

// TestManHeader checks each page's header: its own command's title
// (TETHER-RUN, not TETHER for every page), section 1, a date that is
// reproducible — SOURCE_DATE_EPOCH's, else the last commit's, else none,
// never the time of generation — and tether's source and manual.
func TestManHeader(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000") // 2023-11-14
	dir := t.TempDir()
	if err := generate(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tether", "tether-run", "tether-stop", "tether-completion-bash"} {
		want := `.TH "` + strings.ToUpper(name) + `" "1" "Nov 2023" "tether" "tether manual"`
		if got := thLine(t, filepath.Join(dir, name+".1")); got != want {
			t.Errorf("%s.1: header\n  %s\nwant\n  %s", name, got, want)
		}
	}
	if out, err := exec.Command("man", "-l", filepath.Join(dir, "tether-run.1")).Output(); err == nil {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if !strings.HasPrefix(first, "TETHER-RUN(1)") {
			t.Errorf("man -l tether-run.1 begins %q, want TETHER-RUN(1)", first)
		}
	} else {
		t.Logf("man -l: %v (the header is checked above)", err)
	}

	// Without SOURCE_DATE_EPOCH: the checkout's last commit, the same
	// page however often it is generated.
	os.Unsetenv("SOURCE_DATE_EPOCH")
	// (The matrix guests run this in a copy of the tracked files, not a
	// checkout: there the page has no date.)
	month := ""
	if ct, err := exec.Command("git", "log", "-1", "--format=%ct").Output(); err == nil {
		n, _ := strconv.ParseInt(strings.TrimSpace(string(ct)), 10, 64)
		month = time.Unix(n, 0).UTC().Format("Jan 2006")
	} else {
		t.Logf("not a git checkout (git log: %v): expecting no date", err)
	}
	a, b := t.TempDir(), t.TempDir()
	if err := generate(a); err != nil {
		t.Fatal(err)
	}
	if err := generate(b); err != nil {
		t.Fatal(err)
	}
	want := `.TH "TETHER-RUN" "1" "` + month + `" "tether" "tether manual"`
	if got := thLine(t, filepath.Join(a, "tether-run.1")); got != want {
		t.Errorf("without SOURCE_DATE_EPOCH: header\n  %s\nwant the last commit's month (none outside a checkout)\n  %s", got, want)
	}
	pa, _ := os.ReadFile(filepath.Join(a, "tether-run.1"))
	pb, _ := os.ReadFile(filepath.Join(b, "tether-run.1"))
	if !bytes.Equal(pa, pb) {
		t.Errorf("two generations differ")
	}

	// Outside a checkout (no git): no date rather than today's.
	t.Setenv("PATH", t.TempDir())
	c := t.TempDir()
	if err := generate(c); err != nil {
		t.Fatal(err)
	}
	want = `.TH "TETHER-RUN" "1" "" "tether" "tether manual"`
	if got := thLine(t, filepath.Join(c, "tether-run.1")); got != want {
		t.Errorf("without git: header\n  %s\nwant no date\n  %s", got, want)
	}
}
