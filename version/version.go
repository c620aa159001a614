// Package version says which tether is running, from the build information
// the Go toolchain embeds in every binary (runtime/debug.ReadBuildInfo), so
// that a receipt names the code that wrote it without a release step that
// has to remember to stamp it.
//
// What is known depends on how the binary was built: `go build` inside a
// git checkout records the commit (vcs.revision, vcs.modified, vcs.time);
// `go install module@version` records the module version but no commit;
// `go test` binaries and -buildvcs=false builds record neither. Info leaves
// what was not recorded empty rather than guessing.
//
// Release builds (.goreleaser.yaml) also stamp the tag, commit and commit
// time with the linker (-X), which Get prefers: they are the release's
// names even where the build recorded no VCS information.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// module is tether's module path. When tether is a library inside another
// program, its version is that dependency's, not the program's.
const module = "github.com/tether-run/tether"

// Set by release builds with -ldflags "-X github.com/tether-run/tether/version.stamped...=":
// empty in every other build.
var (
	stampedVersion  string
	stampedRevision string
	stampedTime     string
)

// Info is what the build recorded about the running tether.
type Info struct {
	// Version is the module version: a release tag; for a build in a git
	// checkout a pseudo-version of its commit (Go 1.24+; "+dirty" when
	// modified); "(devel)" when the build recorded no commit.
	Version string
	// Revision is the VCS commit the binary was built from; empty when the
	// build did not record one.
	Revision string
	// Modified says the checkout had uncommitted changes.
	Modified bool
	// Time is the commit time (RFC 3339) when recorded.
	Time string
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Get returns the running binary's Info. It is cheap enough to call per
// run: the build information is parsed by the runtime once.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return stamp(Info{Version: "(unknown)", GoVersion: runtime.Version()})
	}
	return stamp(fromBuildInfo(bi))
}

// stamp overrides info with what the linker stamped, field by field.
func stamp(info Info) Info {
	if stampedVersion != "" {
		info.Version = stampedVersion
	}
	if stampedRevision != "" {
		info.Revision = stampedRevision
	}
	if stampedTime != "" {
		info.Time = stampedTime
	}
	return info
}

// fromBuildInfo picks tether's module out of bi: the main module when the
// binary is tether (or its tests), else the dependency, whose commit is not
// recorded (vcs.* describe the main module's checkout, not tether's).
func fromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{Version: "(unknown)", GoVersion: bi.GoVersion}
	if bi.Main.Path == module || bi.Main.Path == "" {
		if bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Revision = s.Value
			case "vcs.modified":
				info.Modified, _ = strconv.ParseBool(s.Value)
			case "vcs.time":
				info.Time = s.Value
			}
		}
		return info
	}
	for _, d := range bi.Deps {
		if d.Path != module {
			continue
		}
		if d.Replace != nil {
			d = d.Replace
		}
		if d.Version != "" {
			info.Version = d.Version
		}
	}
	return info
}

// String is the one line `tether --version` prints:
//
//	tether (devel) (rev 0123456789ab, modified) go1.26.8 linux/amd64
//
// A build that recorded no commit says "rev unknown" rather than nothing,
// so that its absence is visible.
func (i Info) String() string {
	rev := "rev unknown"
	if i.Revision != "" {
		rev = "rev " + short(i.Revision)
		if i.Modified {
			rev += ", modified"
		}
	}
	return fmt.Sprintf("tether %s (%s) %s %s/%s", i.Version, rev, i.GoVersion, runtime.GOOS, runtime.GOARCH)
}

// short abbreviates a git hash to 12 digits, as pseudo-versions do.
func short(rev string) string {
	if len(rev) > 12 && strings.Trim(rev, "0123456789abcdef") == "" {
		return rev[:12]
	}
	return rev
}
