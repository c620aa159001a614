package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-12-01T00:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want Info
	}{
		{"checkout build", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "(devel)"}, Settings: vcs},
			Info{Version: "(devel)", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true, Time: "2026-12-01T00:00:00Z", GoVersion: "go1.26.8"}},
		{"go install at a version", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "v0.3.0"}},
			Info{Version: "v0.3.0", GoVersion: "go1.26.8"}},
		{"test binary", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: module, Version: "(devel)"}},
			Info{Version: "(devel)", GoVersion: "go1.26.8"}},
		// The program's commit is not tether's: no revision.
		{"library in another program", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/app", Version: "(devel)"}, Settings: vcs,
			Deps: []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.50.0"}, {Path: module, Version: "v0.2.1"}}},
			Info{Version: "v0.2.1", GoVersion: "go1.26.8"}},
		{"replaced library", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{{Path: module, Version: "v0.2.1", Replace: &debug.Module{Path: "../tether", Version: ""}}}},
			Info{Version: "(unknown)", GoVersion: "go1.26.8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fromBuildInfo(&tt.bi); got != tt.want {
				t.Errorf("fromBuildInfo() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	plat := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		in   Info
		want string
	}{
		{Info{Version: "(devel)", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true, GoVersion: "go1.26.8"},
			"tether (devel) (rev 0123456789ab, modified) go1.26.8 " + plat},
		{Info{Version: "v0.3.0", Revision: "0123456789abcdef0123456789abcdef01234567", GoVersion: "go1.26.8"},
			"tether v0.3.0 (rev 0123456789ab) go1.26.8 " + plat},
		{Info{Version: "(devel)", GoVersion: "go1.26.8"}, "tether (devel) (rev unknown) go1.26.8 " + plat},
	}
	for _, tt := range tests {
		if got := tt.in.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestBuiltBinary builds the real tether binary as a user would (go build
// in this checkout, which stamps the commit when git is at hand) and checks
// that --version says what `go version -m` reads from the same binary.
func TestBuiltBinary(t *testing.T) {
	gobin, bin := buildTether(t)
	out, err := exec.Command(gobin, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	settings := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "build" {
			k, v, _ := strings.Cut(f[1], "=")
			settings[k] = v
		}
	}
	want := "(rev unknown)"
	if rev := settings["vcs.revision"]; rev != "" {
		want = "(rev " + rev[:12]
		if settings["vcs.modified"] == "true" {
			want += ", modified"
		}
		want += ")"
	} else {
		t.Logf("the build recorded no commit (GOFLAGS=-buildvcs=false, a linked git worktree: golang.org/issue/58218, or no git): expecting %q", want)
	}
	got, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("tether --version: %v", err)
	}
	line := strings.TrimSuffix(string(got), "\n")
	if strings.Count(string(got), "\n") != 1 || !strings.HasPrefix(line, "tether ") || !strings.Contains(line, want) {
		t.Errorf("tether --version = %q, want one line with %q (go version -m: %v)", got, want, settings)
	}
}

// TestStamped checks that what a release build stamps with -X wins over
// the build info, field by field, and that a build stamping nothing is
// left as it was.
func TestStamped(t *testing.T) {
	base := Info{Version: "(devel)", Revision: "feedface", Modified: true, GoVersion: "go1.26.8"}
	if got := stamp(base); got != base {
		t.Errorf("stamp(%+v) with nothing stamped = %+v, want it unchanged", base, got)
	}
	stampedVersion, stampedRevision, stampedTime = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-12-03T00:00:00Z"
	t.Cleanup(func() { stampedVersion, stampedRevision, stampedTime = "", "", "" })
	want := Info{Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true, Time: "2026-12-03T00:00:00Z", GoVersion: "go1.26.8"}
	if got := stamp(base); got != want {
		t.Errorf("stamp(%+v) = %+v, want %+v", base, got, want)
	}
}

// TestStampedBinary builds tether with the -X flags .goreleaser.yaml
// passes (the variables' full names: a misspelt one is silently ignored
// by the linker) and checks that --version names the stamped release.
func TestStampedBinary(t *testing.T) {
	ldflags := "-X " + module + "/version.stampedVersion=v9.8.7 -X " + module + "/version.stampedRevision=0123456789abcdef0123456789abcdef01234567"
	_, bin := buildTether(t, "-buildvcs=false", "-ldflags", ldflags)
	got, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("tether --version: %v", err)
	}
	if want := "tether v9.8.7 (rev 0123456789ab) "; !strings.HasPrefix(string(got), want) {
		t.Errorf("tether --version = %q, want it to start %q", got, want)
	}
}

// buildTether builds tether (CGO_ENABLED=0) with the go on PATH and the
// build flags given, and returns that go and the binary. It skips in
// -short and where there is no working go (the matrix guests' go serves
// one build and nothing else).
func buildTether(t *testing.T, flags ...string) (gobin, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds tether: not in -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go toolchain not found: %v", err)
	}
	if err := exec.Command(gobin, "version").Run(); err != nil {
		t.Skipf("no working go toolchain (%s version: %v)", gobin, err)
	}
	bin = filepath.Join(t.TempDir(), "tether")
	args := append(append([]string{"build"}, flags...), "-o", bin, module+"/cmd/tether")
	build := exec.Command(gobin, args...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return gobin, bin
}
