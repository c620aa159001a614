//go:build unix

package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-run/tether/registry"
)

// xdgRuntime is an environment with only XDG_RUNTIME_DIR set, to d.
func xdgRuntime(d string) func(string) string {
	return func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return d
		}
		return ""
	}
}

// mkdir makes the directory p with mode (exactly, whatever the umask).
func mkdir(t *testing.T, p string, mode os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRootRefusesUsersRuntimeDir: root with another user's
// XDG_RUNTIME_DIR (su without -l, sudo -E) is refused by DefaultDir and
// by Open, saying whose it is and what to do, and creates nothing in it:
// the user could later swap what root made there for symlinks (issue 22
// item 2). The user itself may use it.
func TestRootRefusesUsersRuntimeDir(t *testing.T) {
	uid, gid := secondUser(t)
	rt := mkdir(t, filepath.Join(publicDir(t), "user"), 0o700)
	chownAll(t, uid, gid, rt)

	_, err := DefaultDir(xdgRuntime(rt))
	for _, want := range []string{rt, fmt.Sprintf("owned by uid %d, not by you (uid 0)", uid), "unset XDG_RUNTIME_DIR or use su -l"} {
		if !errors.Is(err, registry.ErrUnsafe) || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("as root, DefaultDir(XDG_RUNTIME_DIR=%s of uid %d) = %v, want registry.ErrUnsafe saying %q", rt, uid, err, want)
		}
	}
	state := filepath.Join(rt, "tether")
	if _, err := Open(state); !errors.Is(err, registry.ErrUnsafe) || !strings.Contains(err.Error(), fmt.Sprintf("%s is owned by uid %d", rt, uid)) {
		t.Errorf("as root, Open(%s) = %v, want registry.ErrUnsafe naming %s and its owner", state, err, rt)
	}
	if _, err := os.Lstat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("root made %s in uid %d's directory (%v)", state, uid, err)
	}
	if got, want := openAs(t, uid, gid, "XDG_RUNTIME_DIR="+rt), "ok "+state; got != want {
		t.Errorf("as uid %d, the registry in its own XDG_RUNTIME_DIR: %q, want %q", uid, got, want)
	}
}

// TestOpenRefusesUnsafeAncestors: a directory on the way to the state
// dir that group or others can write (and is not sticky) is refused,
// wherever it is on the path, naming it; a sticky one, as /tmp, is not.
func TestOpenRefusesUnsafeAncestors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		mode  os.FileMode
		depth int // directories of the caller's between it and the state dir
		bad   bool
	}{
		{"other-writable", 0o777, 0, true},
		{"group-writable", 0o770, 0, true},
		{"other-writable grandparent", 0o757, 2, true},
		{"sticky other-writable", 0o777 | os.ModeSticky, 0, false},
		{"sticky group-writable grandparent", 0o770 | os.ModeSticky, 1, false},
		{"0755", 0o755, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			anc := mkdir(t, filepath.Join(t.TempDir(), "anc"), tt.mode)
			d := anc
			for i := range tt.depth {
				d = mkdir(t, filepath.Join(d, fmt.Sprint(i)), 0o700)
			}
			state := filepath.Join(d, "state")
			_, err := Open(state)
			switch {
			case tt.bad && (!errors.Is(err, registry.ErrUnsafe) || !strings.Contains(err.Error(), anc+" is writable by group or others")):
				t.Errorf("Open(%s) below a %v directory = %v, want registry.ErrUnsafe naming %s", state, tt.mode, err, anc)
			case tt.bad:
				if _, err := os.Lstat(state); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was made below a %v directory (%v)", state, tt.mode, err)
				}
			case err != nil:
				t.Errorf("Open(%s) below a %v directory = %v, want it open", state, tt.mode, err)
			}
		})
	}
}

// TestOpenRefusesOthersDirInSticky: in a sticky directory anyone can
// write, as /tmp, a directory of another user's is refused on the way
// to root's state dir: its owner can swap what is in it.
func TestOpenRefusesOthersDirInSticky(t *testing.T) {
	uid, gid := secondUser(t)
	tmp := mkdir(t, filepath.Join(t.TempDir(), "tmp"), 0o777|os.ModeSticky)
	theirs := mkdir(t, filepath.Join(tmp, "theirs"), 0o755)
	chownAll(t, uid, gid, theirs)
	state := filepath.Join(theirs, "state")
	if _, err := Open(state); !errors.Is(err, registry.ErrUnsafe) || !strings.Contains(err.Error(), fmt.Sprintf("%s is owned by uid %d", theirs, uid)) || !strings.Contains(err.Error(), "sticky") {
		t.Errorf("Open(%s) = %v, want registry.ErrUnsafe naming %s, its owner and the sticky directory", state, err, theirs)
	}
	if _, err := os.Lstat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("root made %s in uid %d's directory (%v)", state, uid, err)
	}
	mine := filepath.Join(tmp, "mine", "state")
	mkdir(t, filepath.Dir(mine), 0o700)
	if _, err := Open(mine); err != nil {
		t.Errorf("Open(%s), in a directory of mine in a sticky one = %v", mine, err)
	}
}

// TestOpenSymlinkedAncestor: a symlink on the way to the state dir is
// followed if it is root's or the caller's and leads to a safe
// directory (as /var/run -> /run); one of another user's, or one that
// leads to an unsafe directory, is refused, and nothing is made at its
// target. Relative targets and ".." resolve as the kernel does; a loop
// is an error, not a hang.
func TestOpenSymlinkedAncestor(t *testing.T) {
	base := t.TempDir()
	real := mkdir(t, filepath.Join(base, "real"), 0o755)
	wide := mkdir(t, filepath.Join(base, "wide"), 0o777)
	mkdir(t, filepath.Join(real, "sub"), 0o700)
	link := func(name, target string) string {
		p := filepath.Join(base, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := map[string]string{
		"absolute": filepath.Join(link("abs", real), "state"),
		"relative": filepath.Join(link("rel", "real"), "state"),
		"dot-dot":  filepath.Join(link("up", "real/sub/.."), "sub", "state"),
		"chained":  filepath.Join(link("chain", "rel"), "sub", "state"),
	}
	for name, state := range good {
		if r, err := Open(state); err != nil || r.Dir != state {
			t.Errorf("%s: Open(%s) = %v, want it open as %s", name, state, err, state)
		}
	}

	link("loop1", "loop2")
	bad := map[string]struct {
		state, made string
		want        error
	}{
		"to a writable directory": {filepath.Join(link("towide", wide), "state"), filepath.Join(wide, "state"), registry.ErrUnsafe},
		"a loop":                  {filepath.Join(link("loop2", "loop1"), "state"), "", nil},
	}
	if os.Getuid() == 0 {
		uid, gid := secondUser(t)
		theirs := link("theirs", real)
		chownAll(t, uid, gid, theirs)
		bad["another user's"] = struct {
			state, made string
			want        error
		}{filepath.Join(theirs, "other-state"), filepath.Join(real, "other-state"), registry.ErrUnsafe}
	}
	for name, tt := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := Open(tt.state)
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Open(%s) = %v, want %v", tt.state, err, tt.want)
			}
			if tt.made == "" {
				return
			}
			if _, err := os.Lstat(tt.made); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was made through the symlink (%v)", tt.made, err)
			}
		})
	}
}

// TestDefaultDirCreatesStateHome: a new user without XDG_RUNTIME_DIR has
// no ~/.local/state (issue 22 item 7): DefaultDir makes the missing
// directories 0700 and the registry opens; a missing XDG_STATE_HOME is
// made the same way. An XDG_RUNTIME_DIR that is missing is not made: it
// is the system's to make. Root's default is /run/tether, so as root
// the new user is a real one, running this test's binary.
func TestDefaultDirCreatesStateHome(t *testing.T) {
	uid, gid := os.Getuid(), os.Getgid()
	open := func(env ...string) string {
		if uid == 0 {
			t.Fatal("open in-process as root")
		}
		for _, k := range []string{"XDG_RUNTIME_DIR", "XDG_STATE_HOME", "HOME"} {
			t.Setenv(k, "")
		}
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		var out strings.Builder
		openDefault(&out)
		return strings.TrimSpace(out.String())
	}
	if uid == 0 {
		uid, gid = secondUser(t)
		open = func(env ...string) string { return openAs(t, uid, gid, env...) }
	}
	for name, tt := range map[string]struct {
		env     string
		made    []string
		missing string
	}{
		"HOME":                    {"HOME=%s/home", []string{"home/.local", "home/.local/state", "home/.local/state/tether"}, ""},
		"XDG_STATE_HOME":          {"XDG_STATE_HOME=%s/home/a/b", []string{"home/a", "home/a/b", "home/a/b/tether"}, ""},
		"XDG_RUNTIME_DIR missing": {"XDG_RUNTIME_DIR=%s/home/run", nil, "home/run"},
	} {
		t.Run(name, func(t *testing.T) {
			base := publicDir(t)
			home := mkdir(t, filepath.Join(base, "home"), 0o700)
			chownAll(t, uid, gid, home)
			got := open(fmt.Sprintf(tt.env, base), "HOME="+home)
			if tt.missing != "" {
				if !strings.HasPrefix(got, "error ") || !strings.Contains(got, "no such file") {
					t.Errorf("with %s: %q, want an error: no such file", tt.env, got)
				}
				if _, err := os.Lstat(filepath.Join(base, tt.missing)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("with %s, %s was made (%v)", tt.env, tt.missing, err)
				}
				return
			}
			if want := "ok " + filepath.Join(base, tt.made[len(tt.made)-1]); got != want {
				t.Fatalf("with %s: %q, want %q", tt.env, got, want)
			}
			for _, m := range tt.made {
				st, err := os.Lstat(filepath.Join(base, m))
				if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 || fileUID(st) != uid {
					t.Errorf("%s: %v, %v; want a 0700 directory of uid %d", m, err, st, uid)
				}
			}
		})
	}
}
