package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIDocFresh regenerates the reference in memory and fails when the
// committed docs/cli.md differs from it: a command, flag or help text
// changed without the reference (CI runs go test ./...).
func TestCLIDocFresh(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	path := filepath.Join("..", "..", defaultPath)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", defaultPath, err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl || i >= len(g) || i >= len(w) {
			t.Fatalf("docs/cli.md is stale: run go run ./internal/clidoc (from the module root)\nfirst difference, line %d:\n  file:      %q\n  generated: %q", i+1, gl, wl)
		}
	}
}

// TestCLIDocDeterministic checks that the reference names nothing of the
// machine that generated it: the same text wherever it is generated, so
// that TestCLIDocFresh passes on any host.
func TestCLIDocDeterministic(t *testing.T) {
	a, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TETHER_CGROUP_PARENT", "/sys/fs/cgroup/elsewhere")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("COLUMNS", "40")
	b, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("the reference depends on the environment")
	}
	wd, _ := os.Getwd()
	host, _ := os.Hostname()
	for _, s := range []string{wd, filepath.Dir(filepath.Dir(wd)), os.TempDir(), host} {
		if s != "" && len(s) > 3 && bytes.Contains(a, []byte(s)) {
			t.Errorf("the reference holds %q, a name of this machine", s)
		}
	}
}
