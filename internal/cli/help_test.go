package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// commands returns every command a user can call, subcommands included.
func commands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if s.Hidden || s.Name() == cobra.ShellCompRequestCmd || s.Name() == cobra.ShellCompNoDescRequestCmd {
			continue
		}
		out = append(out, s)
		out = append(out, commands(s)...)
	}
	return out
}

// TestHelpHasExample: `tether help CMD` shows an example for every
// command (issue 11).
func TestHelpHasExample(t *testing.T) {
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, getenv: func(string) string { return "" }}
	cmds := commands(newRoot(e, nil))
	if len(cmds) < 12 {
		t.Fatalf("found %d commands, want every one (run, start, ..., completion bash/zsh/fish, help)", len(cmds))
	}
	for _, c := range append(cmds, newRoot(e, nil)) {
		path := strings.Fields(c.CommandPath())[1:]
		t.Run(strings.Join(append([]string{"tether"}, path...), " "), func(t *testing.T) {
			out.Reset()
			root := newRoot(e, nil)
			root.SetArgs(append([]string{"help"}, path...))
			if err := root.Execute(); err != nil {
				t.Fatalf("tether help %s: %v", strings.Join(path, " "), err)
			}
			if _, ex, ok := strings.Cut(out.String(), "Examples:\n  "); !ok || !strings.Contains(ex, "tether") {
				t.Errorf("tether help %s = %q, want an Examples section", strings.Join(path, " "), out.String())
			}
		})
	}
}

// TestHelpUnknownTopic: `tether help nosuch` is a usage error (exit 2,
// on stderr), not help on stdout with exit 0 (issue 27).
func TestHelpUnknownTopic(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"help", "nosuch"}, strings.NewReader(""), &stdout, &stderr)
	if code != ExitUsage || stdout.Len() != 0 || !strings.Contains(stderr.String(), `"nosuch"`) {
		t.Errorf("tether help nosuch = exit %d, stdout %q, stderr %q; want exit 2 and the topic named on stderr", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := Main([]string{"help", "ls"}, strings.NewReader(""), &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "tether ls") {
		t.Errorf("tether help ls = exit %d, stdout %q; want ls's help", code, stdout.String())
	}
}
