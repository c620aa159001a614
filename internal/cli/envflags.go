package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// commandFlags are what run and start pass to the command besides its
// arguments: its environment and the first signal of its stop.
type commandFlags struct {
	signal   string
	env      []string
	envFiles []string
	stopExec *string // --stop-exec, nil when not given
}

const envFileHelp = `FILE of KEY=VALUE lines for the command's environment (repeatable): blank
lines and lines starting with # are skipped, "export " before KEY is allowed,
VALUE is taken as written except that one pair of matching quotes around
it is removed (no escapes, no $expansion, no multi-line values)`

func (f *commandFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.signal, "signal", "TERM", "first signal of the stop protocol, sent to every member before the grace (`SIG`: TERM, INT, HUP, USR1, a number; as timeout -s)")
	fl.StringArrayVarP(&f.env, "env", "e", nil, "set `KEY=VALUE` in the command's environment (repeatable; after --env-file)")
	fl.StringArrayVar(&f.envFiles, "env-file", nil, envFileHelp)
	fl.Func("stop-exec", "run `CMD` (sh -c) at the start of every stop, before the stop signal, to end the group its own way (tmux kill-server); contained, bounded by the grace, in the receipt's steps; '' for none (a profile sets one)", func(v string) error {
		f.stopExec = &v
		return nil
	})
}

// stopExecArgv is --stop-exec as a command: nil when not given (a
// session's profile then chooses), empty for an empty CMD (none).
func (f *commandFlags) stopExecArgv() []string {
	switch {
	case f.stopExec == nil:
		return nil
	case *f.stopExec == "":
		return []string{}
	case runtime.GOOS == "windows":
		return []string{"cmd.exe", "/c", *f.stopExec}
	}
	return []string{"/bin/sh", "-c", *f.stopExec}
}

// stopSignal parses --signal.
func (f *commandFlags) stopSignal() (syscall.Signal, error) { return parseSignal(f.signal) }

// environ returns base with the --env-file and --env variables set, in
// that order (a later one wins), or nil when there are none (the
// caller's environment as it is); and the variables set. Each file is
// read once, here.
func (f *commandFlags) environ(base []string) (env, set []string, err error) {
	if len(f.env) == 0 && len(f.envFiles) == 0 {
		return nil, nil, nil
	}
	if set, err = envVars(f.envFiles, f.env); err != nil {
		return nil, nil, err
	}
	return mergeEnv(base, set), set, nil
}

// tethersVars name a run or session: tether sets them, and finds its
// runs and sessions by them, so a caller's value would be a lie.
var tethersVars = []string{"TETHER_SESSION", "TETHER_SESSION_DIR", "TETHER_RUN_ID"}

// envVars reads the --env-file files, then the --env values, in that
// order (a later one wins), checking each.
func envVars(files, env []string) ([]string, error) {
	var set []string
	for _, p := range files {
		kvs, err := readEnvFile(p)
		if err != nil {
			return nil, err
		}
		set = append(set, kvs...)
	}
	for _, kv := range env {
		if !hasEnvKey(kv) {
			return nil, fmt.Errorf("--env %q: want KEY=VALUE, KEY a letter or _ followed by letters, digits or _", kv)
		}
		set = append(set, kv)
	}
	for _, kv := range set {
		if k, _, _ := strings.Cut(kv, "="); slices.Contains(tethersVars, k) {
			return nil, fmt.Errorf("%s: tether sets %s (it names the run or session); use another name", kv, k)
		}
	}
	return set, nil
}

// hasEnvKey reports whether kv starts KEY=VALUE: a portable variable name (POSIX
// names of the environment) and the =.
func hasEnvKey(kv string) bool {
	k, _, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// readEnvFile reads KEY=VALUE lines; an error names the file and line.
func readEnvFile(path string) ([]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--env-file: %w", err)
	}
	defer fh.Close()
	return parseEnvFile(fh, path)
}

// parseEnvFile parses the env file read from r; path names it in errors.
func parseEnvFile(r io.Reader, path string) ([]string, error) {
	var kvs []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		if !hasEnvKey(line) {
			return nil, fmt.Errorf("--env-file %s:%d: want KEY=VALUE, KEY a letter or _ followed by letters, digits or _", path, n)
		}
		if strings.IndexByte(line, 0) >= 0 {
			// The kernel ends a variable at NUL: the command would get
			// another value than the file says (exec refuses it anyway).
			return nil, fmt.Errorf("--env-file %s:%d: a NUL byte; values must be text", path, n)
		}
		k, v, _ := strings.Cut(line, "=")
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		kvs = append(kvs, k+"="+v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--env-file %s: %w", path, err)
	}
	return kvs, nil
}

// mergeEnv returns base with set applied: a variable set replaces base's
// entry of the same name, in place; new ones come at the end.
func mergeEnv(base, set []string) []string {
	out := append([]string(nil), base...)
	at := map[string]int{}
	for i, kv := range out {
		k, _, _ := strings.Cut(kv, "=")
		at[k] = i
	}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := at[k]; ok {
			out[i] = kv
			continue
		}
		at[k] = len(out)
		out = append(out, kv)
	}
	return out
}
