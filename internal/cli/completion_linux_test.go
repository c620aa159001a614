package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shellEnv is the environment for a shell that runs `tether`: this test
// binary, as tether, first on PATH under that name, with the test's own
// registry.
func shellEnv(t *testing.T, xdg string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "tether")); err != nil {
		t.Fatal(err)
	}
	env := withoutEnv(os.Environ(), asTetherEnv, caseEnv, "XDG_RUNTIME_DIR", "PATH")
	return append(env, asTetherEnv+"=1", caseEnv+"="+marker(t), "XDG_RUNTIME_DIR="+xdg, "PATH="+bin+":"+os.Getenv("PATH"))
}

// inShell runs script with shell -c, args as $1..., and returns its
// stdout.
func inShell(t *testing.T, env []string, shell, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, append([]string{"-c", script, shell}, args...)...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	forkMu.RLock()
	out, err := cmd.Output()
	forkMu.RUnlock()
	if err != nil {
		t.Fatalf("%s -c %q %q: %v; stderr:\n%s", shell, script, args, err, stderr.String())
	}
	return string(out)
}

// bashComplete is what bash's completion of `tether WORDS...` offers, with
// the script `tether completion bash` generated sourced: it runs the
// function the script registered for tether (complete -p), as bash does
// on TAB. The script needs the bash-completion package, as every cobra
// script does.
const bashComplete = `source /usr/share/bash-completion/bash_completion || exit 1
source <(tether completion bash) || exit 1
spec=$(complete -p tether) || exit 1
fn=${spec#*-F }; fn=${fn%% *}
COMP_WORDS=(tether "$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
COMP_TYPE=9
"$fn" tether "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"
`

// TestCompletionSessionNames starts a real session and asks for it the
// way each shell does, through the scripts tether generates: bash (run
// for real), fish (complete -C, for real), zsh (the script loads and
// registers _tether: zsh's completion system needs a terminal).
func TestCompletionSessionNames(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	xdg := stateEnv(t)
	name := mustStart(t, xdg, nil, "--name", "web-compl", "--owner", "none", "--", "sleep", "100")
	ended := mustStart(t, xdg, nil, "--name", "done-compl", "--owner", "none", "--", "true")
	awaitState(t, xdg, ended, "stopped")

	// cobra's protocol itself: names with descriptions, then the directive.
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"__complete", "stop", ""}, []string{name + "\trunning: sleep 100", ":4"}, []string{ended}},
		{[]string{"__complete", "stop", "web"}, []string{name}, []string{ended}},
		{[]string{"__complete", "stop", name, ""}, nil, []string{name}},
		{[]string{"__complete", "status", ""}, []string{name, ended}, nil},
		{[]string{"__complete", "logs", "d"}, []string{ended}, []string{name}},
		{[]string{"__complete", "wait", name, ""}, nil, []string{name, ended}},
	} {
		code, out, stderr := tetherIn(t, xdg, nil, tc.args...)
		if code != 0 {
			t.Fatalf("tether %q = %d: %s", tc.args, code, stderr)
		}
		names := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			names[l] = true
			names[strings.Split(l, "\t")[0]] = true
		}
		for _, w := range tc.want {
			if !names[w] {
				t.Errorf("tether %q = %q, want %q in it", tc.args, out, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("tether %q = %q, want no %q", tc.args, out, n)
			}
		}
	}

	env := shellEnv(t, xdg)
	t.Run("bash", func(t *testing.T) {
		if _, err := os.Stat("/usr/share/bash-completion/bash_completion"); err != nil {
			t.Skip("no bash-completion package (CI installs it)")
		}
		for _, tc := range []struct {
			words []string
			want  string
		}{
			{[]string{"stop", "web-"}, name},
			{[]string{"sta"}, "start\nstatus"},
			{[]string{"status", "done"}, ended},
			{[]string{"completion", "z"}, "zsh"},
		} {
			out := inShell(t, env, "bash", bashComplete, tc.words...)
			if strings.TrimSpace(out) != tc.want {
				t.Errorf("bash completion of tether %q = %q, want %q", tc.words, out, tc.want)
			}
		}
	})
	t.Run("fish", func(t *testing.T) {
		if _, err := exec.LookPath("fish"); err != nil {
			t.Skip("no fish (CI installs it)")
		}
		out := inShell(t, env, "fish", `tether completion fish | source; complete -C "tether stop "`)
		if !strings.Contains(out, name+"\trunning: sleep 100") || strings.Contains(out, ended) {
			t.Errorf("fish: complete -C 'tether stop ' = %q, want %s with its description, and not %s", out, name, ended)
		}
	})
	t.Run("zsh", func(t *testing.T) {
		if _, err := exec.LookPath("zsh"); err != nil {
			t.Skip("no zsh (CI installs it)")
		}
		out := inShell(t, env, "zsh", `autoload -U compinit && compinit -u -D && source <(tether completion zsh) && print -r -- $_comps[tether]`)
		if strings.TrimSpace(out) != "_tether" {
			t.Errorf("zsh: after sourcing the script, $_comps[tether] = %q, want _tether", out)
		}
	})
}
