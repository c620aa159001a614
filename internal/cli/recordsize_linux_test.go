package cli_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigArgs returns n arguments of size bytes of c each. A record of 1,200
// of 1,000 is over its 1 MiB while each is within MAX_ARG_STRLEN (128
// KiB) and all are within ARG_MAX (2 MiB here): the kernel runs such a
// command, so tether has to say no itself.
func bigArgs(n, size int, c string) []string {
	args := make([]string, n)
	for i := range args {
		args[i] = strings.Repeat(c, size)
	}
	return args
}

// assertNoSession checks that xdg's registry holds nothing of name: no
// runtime dir (its claim), record, ended record or log.
func assertNoSession(t *testing.T, xdg, name string) {
	t.Helper()
	for _, p := range []string{"s/" + name, "records/" + name + ".json", "ended/" + name + ".json"} {
		if _, err := os.Lstat(filepath.Join(xdg, "tether", p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists (%v): the refused start created it", p, err)
		}
	}
	if logs, _ := filepath.Glob(filepath.Join(xdg, "tether", "logs", name+"@*")); len(logs) > 0 {
		t.Errorf("%v exist: the refused start created them", logs)
	}
}

// TestStartRefusesRecordTooLarge (issue 22): a command line that the
// kernel runs but whose record would be over the 1 MiB a record is read
// back with, or an environment that makes spec.json over its 4 MiB, is
// refused with exit 2 naming the limit, before anything is created.
// Before, the record was written, every read of it failed, and its
// runtime dir held the name for good.
func TestStartRefusesRecordTooLarge(t *testing.T) {
	var bigEnv []string
	for i := range 8 {
		// '<' takes 6 bytes in JSON (\u003c): 800 KiB of them make a
		// spec of 4.7 MiB.
		bigEnv = append(bigEnv, fmt.Sprintf("TETHER_TEST_BIG%d=%s", i, strings.Repeat("<", 100<<10)))
	}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"argv", nil, bigArgs(1200, 1000, "a"), "over the 1 MiB limit of a record"},
		{"env", bigEnv, nil, "over the 4 MiB limit of a spec"},
	} {
		t.Run(c.name, func(t *testing.T) {
			xdg := stateEnv(t)
			ran := filepath.Join(t.TempDir(), "ran")
			argv := append([]string{"start", "--name", "big", "--owner", "none", "--", "sh", "-c", `touch "$0"; sleep 1000`, ran}, c.args...)
			code, _, stderr := tetherIn(t, xdg, c.env, argv...)
			if code != 2 || !strings.Contains(stderr, `session "big"`) || !strings.Contains(stderr, c.want) {
				t.Errorf("tether start (%s too large) = exit %d, stderr %.300q; want 2 naming the session and %q", c.name, code, stderr, c.want)
			}
			if _, err := os.Stat(ran); err == nil {
				t.Error("the refused command ran")
			}
			assertNoSession(t, xdg, "big")
			assertNoSurvivors(t)
			if code, out, stderr := tetherIn(t, xdg, nil, "ls", "--all"); code != 0 || stderr != "" || strings.Contains(out, "big") {
				t.Errorf("tether ls --all = exit %d, stdout %q, stderr %.300q; want 0, no session, no warning", code, out, stderr)
			}
			// The name is free.
			mustStart(t, xdg, nil, "--name", "big", "--owner", "none", "--", "true")
		})
	}
}

// TestRunRecordTooLarge (issue 22): tether run of such a command line
// runs it without a record (as without a usable state dir), saying why
// and naming the limit; nothing is written that ls or reap cannot read.
func TestRunRecordTooLarge(t *testing.T) {
	xdg := stateEnv(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// During the run: the records there are, and what tether ls ($0, the
	// test binary as tether) has to say.
	script := `ls -A "$XDG_RUNTIME_DIR/tether/records"; "$0" ls 2>&1 >/dev/null`
	code, stdout, stderr := tetherIn(t, xdg, nil, append([]string{"run", "--", "sh", "-c", script, exe}, bigArgs(1200, 1000, "a")...)...)
	if code != 0 || !strings.Contains(stderr, "no run record") || !strings.Contains(stderr, "over the 1 MiB limit of a record") {
		t.Errorf("tether run (argv too large for a record) = exit %d, stderr %.300q; want 0 and a warning naming the limit", code, stderr)
	}
	if strings.TrimSpace(stdout) != "" {
		t.Errorf("during the run, the records and tether ls's warnings: %.300q; want none", stdout)
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "ls", "--all"); code != 0 || stderr != "" {
		t.Errorf("tether ls --all after the run = exit %d, stderr %.300q; want 0, no warning", code, stderr)
	}
	assertNoSurvivors(t)
}

// TestLsBesideUnreadableRecord: a record over the size bound (written by
// an older tether, or planted) is reported on stderr, and ls lists the
// other sessions and exits 0.
func TestLsBesideUnreadableRecord(t *testing.T) {
	xdg := stateEnv(t)
	name := mustStart(t, xdg, nil, "--name", "ok", "--owner", "none", "--", "sleep", "1000")
	huge := filepath.Join(xdg, "tether", "records", "huge.json")
	if err := os.WriteFile(huge, []byte(`{"name": "huge", "argv": ["`+strings.Repeat("a", 1<<20)+`"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ls"}, {"ls", "--all", "--json"}} {
		code, out, stderr := tetherIn(t, xdg, nil, args...)
		if code != 0 || !strings.Contains(out, name) || !strings.Contains(stderr, huge) {
			t.Errorf("tether %s = exit %d, stdout %q, stderr %.300q; want 0, %s listed, %s reported", strings.Join(args, " "), code, out, stderr, name, huge)
		}
	}
	if code, _, stderr := tetherIn(t, xdg, nil, "stop", name); code != 0 {
		t.Errorf("tether stop %s = %d: %s", name, code, stderr)
	}
	assertNoSurvivors(t)
}
