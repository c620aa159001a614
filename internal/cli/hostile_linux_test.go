package cli_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileEnvironment: environment a caller passes that tether cannot
// use is refused with the variable or path and the reason, in one line,
// and nothing is created or followed (issue 15). What tether sets for a
// session (TETHER_SESSION, TMPDIR) wins over whatever the caller had.
func TestHostileEnvironment(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	tests := []struct {
		name string
		env  []string
		args []string
		code int
		want []string
	}{
		{"relative XDG_RUNTIME_DIR", []string{"XDG_RUNTIME_DIR=run/user/0"}, []string{"ls"}, 1, []string{`XDG_RUNTIME_DIR="run/user/0"`, "not an absolute path"}},
		{"XDG_RUNTIME_DIR with a newline", []string{"XDG_RUNTIME_DIR=/tmp/a\nb"}, []string{"ls"}, 1, []string{`XDG_RUNTIME_DIR="/tmp/a\nb"`, "control character"}},
		{"huge XDG_RUNTIME_DIR", []string{"XDG_RUNTIME_DIR=/" + strings.Repeat("x", 5000)}, []string{"status", "web"}, 1, []string{"XDG_RUNTIME_DIR=", "PATH_MAX"}},
		{"missing XDG_RUNTIME_DIR", []string{"XDG_RUNTIME_DIR=" + filepath.Join(base, "missing")}, []string{"ls"}, 1, []string{filepath.Join(base, "missing", "tether"), "no such file"}},
		{"XDG_RUNTIME_DIR a file", []string{"XDG_RUNTIME_DIR=" + file}, []string{"ls"}, 1, []string{filepath.Join(file, "tether"), "not a directory"}},
		{"relative XDG_RUNTIME_DIR, run", []string{"XDG_RUNTIME_DIR=rel"}, []string{"run", "--", "true"}, 0, []string{"no run record", `XDG_RUNTIME_DIR="rel"`}},
		{"relative TETHER_CGROUP_PARENT", []string{"TETHER_CGROUP_PARENT=unified/x"}, []string{"run", "--", "true"}, 125, []string{"unified/x"}},
		{"TETHER_CGROUP_PARENT not a cgroup", []string{"TETHER_CGROUP_PARENT=" + base}, []string{"run", "--", "true"}, 125, []string{base}},
		{"missing TETHER_CGROUP_PARENT", []string{"TETHER_CGROUP_PARENT=/sys/fs/cgroup/unified/tether-missing"}, []string{"run", "--", "true"}, 125, []string{"/sys/fs/cgroup/unified/tether-missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xdg := stateEnv(t)
			code, _, stderr := tetherIn(t, xdg, tt.env, tt.args...)
			ok := code == tt.code && strings.HasPrefix(stderr, "tether: ")
			for _, w := range tt.want {
				ok = ok && strings.Contains(stderr, w)
			}
			if !ok {
				t.Errorf("%q with %.60q = %d, %q; want %d and %q", tt.args, tt.env, code, stderr, tt.code, tt.want)
			}
		})
	}
	if _, err := os.Lstat(filepath.Join(base, "missing")); err == nil {
		t.Error("a missing XDG_RUNTIME_DIR was created")
	}
	if ents, _ := os.ReadDir(filepath.Join(base, "run")); len(ents) > 0 {
		t.Error("a relative XDG_RUNTIME_DIR was used")
	}
	assertNoSurvivors(t)

	t.Run("caller's TETHER_SESSION and TMPDIR", func(t *testing.T) {
		xdg := stateEnv(t)
		out := filepath.Join(t.TempDir(), "env")
		mustStart(t, xdg, []string{"TETHER_SESSION=../forged", "TMPDIR=relative/" + strings.Repeat("t", 300)}, "-q", "--name", "own", "--",
			"sh", "-c", `printf '%s\n%s\n' "$TETHER_SESSION" "$TMPDIR" > `+out)
		awaitState(t, xdg, "own", "stopped")
		b, _ := os.ReadFile(out)
		want := "own\n" + filepath.Join(xdg, "tether", "s", "own", "tmp") + "\n"
		if string(b) != want {
			t.Errorf("the session's TETHER_SESSION and TMPDIR = %q, want %q", b, want)
		}
	})
}

// TestStateDirNotOurs: files and directories in the state dir that tether
// did not make, or of the wrong type, are refused with their path and the
// reason — never followed, waited on, or deleted (issue 15).
func TestStateDirNotOurs(t *testing.T) {
	type plant func(t *testing.T, state string) string // returns what must survive
	fifo := func(rel string) plant {
		return func(t *testing.T, state string) string {
			p := filepath.Join(state, rel)
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	link := func(rel string) plant {
		return func(t *testing.T, state string) string {
			p := filepath.Join(state, rel)
			os.RemoveAll(p)
			target := filepath.Join(t.TempDir(), "target")
			os.Mkdir(target, 0o700)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	fileAt := func(rel string) plant {
		return func(t *testing.T, state string) string {
			p := filepath.Join(state, rel)
			os.RemoveAll(p)
			if err := os.WriteFile(p, []byte("not a dir"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	sock := func(rel string) plant {
		return func(t *testing.T, state string) string {
			p := filepath.Join(state, rel)
			os.Remove(p)
			// Bound at a short path and renamed into place: a run's
			// log path (NAME@RUNID.log) can be past AF_UNIX's 107 bytes.
			short, err := os.MkdirTemp("", "sock")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(short)
			l, err := net.Listen("unix", filepath.Join(short, "s"))
			if err != nil {
				t.Fatal(err)
			}
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			t.Cleanup(func() { l.Close() })
			if err := os.Rename(filepath.Join(short, "s"), p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	chown := func(rel string) plant {
		return func(t *testing.T, state string) string {
			p := filepath.Join(state, rel)
			if os.Getuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			os.Chown(p, 65534, 65534)
			return p
		}
	}
	// theLog plants mk's file where the ended session's log is: its
	// run's own (issue 27).
	theLog := func(mk func(string) plant) plant {
		return func(t *testing.T, state string) string {
			rel, err := filepath.Rel(state, statusOf(t, filepath.Dir(state), "ended").Log)
			if err != nil {
				t.Fatal(err)
			}
			return mk(rel)(t, state)
		}
	}
	tests := []struct {
		name  string
		plant plant
		args  []string
		code  int
		want  string
	}{
		{"log is a FIFO: logs", theLog(fifo), []string{"logs", "ended"}, 1, "not a regular file"},
		{"log is a symlink: logs", theLog(link), []string{"logs", "ended"}, 1, "symlink"},
		{"log is a socket: logs", theLog(sock), []string{"logs", "ended"}, 1, "ended@"},
		{"log is a FIFO: status", theLog(fifo), []string{"status", "ended"}, 0, ""},
		{"log is another user's: logs", theLog(chown), []string{"logs", "ended"}, 1, "uid 65534"},
		{"records is a file: ls", fileAt("records"), []string{"ls"}, 1, "not a directory"},
		{"s is a symlink: start", link("s"), []string{"start", "--name", "x", "--", "true"}, 1, "symlink"},
		{"runtime dir is a file: start", fileAt("s/taken"), []string{"start", "--name", "taken", "--", "true"}, 1, "not a directory"},
		{"runtime dir is a FIFO: start", fifo("s/taken"), []string{"start", "--name", "taken", "--", "true"}, 1, "not a directory"},
		{"lock is a FIFO: start", fifo("lock"), []string{"start", "--name", "x", "--", "true"}, 1, "lock"},
		{"record is a FIFO: status", fifo("records/rec.json"), []string{"status", "rec"}, 1, "not a regular file"},
		{"records another user's: ls", chown("records"), []string{"ls"}, 1, "owned by uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xdg := stateEnv(t)
			state := filepath.Join(xdg, "tether")
			mustStart(t, xdg, nil, "-q", "--name", "ended", "--", "true")
			awaitState(t, xdg, "ended", "stopped")
			planted := tt.plant(t, state)
			done := make(chan struct{})
			var code int
			var stderr string
			go func() { defer close(done); code, _, stderr = tetherIn(t, xdg, nil, tt.args...) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("tether %q hung on %s", tt.args, planted)
			}
			if code != tt.code || (tt.want != "" && (!strings.Contains(stderr, tt.want) || !strings.Contains(stderr, filepath.Base(planted)))) {
				t.Errorf("tether %q with %s planted = %d, %q; want %d naming it and %q", tt.args, planted, code, stderr, tt.code, tt.want)
			}
			if _, err := os.Lstat(planted); err != nil {
				t.Errorf("%s is gone: %v; tether deletes only what is provably its own", planted, err)
			}
			assertNoSurvivors(t)
		})
	}
}
