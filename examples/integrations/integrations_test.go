// Package integrations tests the CI examples in this directory
// (docs/integrations.md): each YAML file is parsed, its shape checked (the
// receipt tether writes is the artifact kept, also when the suite fails),
// and its tether command run here as written, in a copy of e2e/ (a
// stand-in suite that leaves a daemon behind), with a tether built from
// this checkout first on PATH. The steps that set up a runner (checkout,
// installing Go and tether) are the CI system's and are not run.
package integrations

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// tetherDir holds the tether TestMain builds from this checkout.
var tetherDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tether-integrations-")
	if err != nil {
		panic(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "tether"), "./cmd/tether")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("go build tether: " + err.Error() + "\n" + string(out))
	}
	tetherDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// alive reports whether a process whose argv is exactly argv exists.
func alive(argv ...string) bool {
	want := strings.Join(argv, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(b) == want {
			return true
		}
	}
	return false
}

// runScript runs script with sh -e in a copy of e2e/ with tether on PATH
// and returns the directory.
func runScript(t *testing.T, script string) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skipf("npm not found (the examples run npm run e2e): %v", err)
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "e2e.sh"} {
		b, err := os.ReadFile(filepath.Join("e2e", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+tetherDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("%s:\n%s", script, out.String())
	if err != nil {
		t.Fatalf("the example's command failed: %v", err)
	}
	if !strings.Contains(out.String(), "e2e: 3 passed") {
		t.Errorf("the suite's output is missing")
	}
	return dir
}

// checkReceipt checks that the receipt at path says the run exited 0 and
// its stop was confirmed, and that the suite's daemon is gone.
func checkReceipt(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the receipt the example keeps as an artifact: %v", err)
	}
	var r struct {
		Exit          struct{ Code int }
		StopConfirmed bool `json:"stop_confirmed"`
		Mechanism     string
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("receipt %s: %v", path, err)
	}
	if r.Exit.Code != 0 || !r.StopConfirmed {
		t.Errorf("receipt: exit %d, stop_confirmed %v (mechanism %s), want 0 and true", r.Exit.Code, r.StopConfirmed, r.Mechanism)
	}
	for i := 0; i < 50 && alive("sleep", "3141.26"); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if alive("sleep", "3141.26") {
		t.Errorf("the suite's daemon (sleep 3141.26) outlived tether run")
	}
}

// receiptArg returns the --receipt FILE of a tether run command line.
func receiptArg(t *testing.T, line string) string {
	t.Helper()
	f := strings.Fields(line)
	for i := range f[:len(f)-1] {
		if f[i] == "--receipt" {
			return f[i+1]
		}
	}
	t.Fatalf("%q has no --receipt FILE", line)
	return ""
}

func readYAML(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestGitHubActions(t *testing.T) {
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string
				Uses string
				Run  string
				If   string
				With map[string]string
			}
		}
	}
	readYAML(t, "github-actions.yml", &wf)
	job, ok := wf.Jobs["e2e"]
	if !ok {
		t.Fatal("github-actions.yml: no job e2e")
	}
	var run, receipt string
	uploaded := false
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Run, "tether run ") {
			run, receipt = s.Run, receiptArg(t, s.Run)
		}
		if strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			if receipt == "" || s.With["path"] != receipt {
				t.Errorf("upload step %q uploads %q, want the receipt of the tether run step before it (%q)", s.Name, s.With["path"], receipt)
			}
			if s.If != "always()" {
				t.Errorf("upload step %q: if %q, want always() (the receipt matters most when the suite fails)", s.Name, s.If)
			}
			uploaded = true
		}
	}
	if run == "" || !uploaded {
		t.Fatalf("github-actions.yml: want a tether run step and an upload-artifact step after it (run %q, upload %v)", run, uploaded)
	}
	dir := runScript(t, run)
	checkReceipt(t, filepath.Join(dir, receipt))
}

func TestGitLabCI(t *testing.T) {
	var ci map[string]struct {
		Script    []string
		Artifacts struct {
			When  string
			Paths []string
		}
	}
	readYAML(t, "gitlab-ci.yml", &ci)
	job, ok := ci["e2e"]
	if !ok {
		t.Fatal("gitlab-ci.yml: no job e2e")
	}
	if len(job.Script) != 1 || !strings.HasPrefix(job.Script[0], "tether run ") {
		t.Fatalf("gitlab-ci.yml: script %q, want one tether run line", job.Script)
	}
	receipt := receiptArg(t, job.Script[0])
	if job.Artifacts.When != "always" || len(job.Artifacts.Paths) != 1 || job.Artifacts.Paths[0] != receipt {
		t.Errorf("gitlab-ci.yml: artifacts when %q paths %q, want always and [%s]", job.Artifacts.When, job.Artifacts.Paths, receipt)
	}
	dir := runScript(t, strings.Join(job.Script, "\n"))
	checkReceipt(t, filepath.Join(dir, receipt))
}

// TestGoTestExec runs a test that leaves a daemon behind under go test
// -exec 'tether run --', as docs/integrations.md shows: the daemon is
// stopped with the test binary.
func TestGoTestExec(t *testing.T) {
	cmd := exec.Command("go", "test", "-count=1", "-exec", "tether run --timeout 5m --", "./...")
	cmd.Dir = filepath.Join("testdata", "leaky")
	cmd.Env = append(os.Environ(), "PATH="+tetherDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	t.Logf("go test -exec 'tether run --timeout 5m --':\n%s", out)
	if err != nil {
		t.Fatalf("go test -exec: %v", err)
	}
	for i := 0; i < 50 && alive("sleep", "3142.26"); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if alive("sleep", "3142.26") {
		t.Errorf("the test's daemon (sleep 3142.26) outlived go test -exec 'tether run --'")
	}
}

// TestPlaywright runs playwright/ as written: its globalSetup starts the
// dev server (server.js, which also starts a detached child) as a tether
// session with --ready, a test loads its page in Chromium, globalTeardown
// stops the session. Afterwards nothing of the server is left.
// PLAYWRIGHT_TEST_MODULES names a node_modules with @playwright/test
// (.ci/run installs one).
func TestPlaywright(t *testing.T) {
	mods := os.Getenv("PLAYWRIGHT_TEST_MODULES")
	if mods == "" {
		t.Skip("PLAYWRIGHT_TEST_MODULES (a node_modules with @playwright/test 1.65.2) not set")
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium: %v", err)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skipf("npm not found (the session runs npm run dev): %v", err)
	}
	dir := t.TempDir()
	ents, err := os.ReadDir("playwright")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("playwright", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs, err := filepath.Abs(mods)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	// The session's state stays in this test's own directory.
	state := t.TempDir()
	env := append(os.Environ(), "PATH="+tetherDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CHROMIUM="+chromium, "XDG_RUNTIME_DIR="+state, "XDG_STATE_HOME="+state)
	cmd := exec.Command(filepath.Join("node_modules", ".bin", "playwright"), "test", "--reporter=line")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	t.Logf("playwright test:\n%s", out)
	if err != nil {
		t.Fatalf("playwright test: %v", err)
	}
	if !strings.Contains(string(out), "1 passed") {
		t.Errorf("playwright test: want 1 passed")
	}
	for i := 0; i < 50 && alive("sleep", "3143.26"); i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if alive("sleep", "3143.26") || alive("node", "server.js") {
		t.Errorf("the dev server or its child outlived the suite")
	}
	ls := exec.Command(filepath.Join(tetherDir, "tether"), "ls")
	ls.Env = env
	if b, _ := ls.CombinedOutput(); strings.Contains(string(b), "pw-web") && strings.Contains(string(b), "running") {
		t.Errorf("tether ls after the suite: %s", b)
	}
}
