package cli_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tether-run/tether/internal/cli"
)

// TestEveryFlagCompletes: every flag of every command that takes a value
// completes it — a list of what it accepts, the registry's names, or
// (marked) file names — so no value falls back to file names by
// accident, a new flag included.
func TestEveryFlagCompletes(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.NoOptDefVal != "" || f.Name == "help" {
				return
			}
			n++
			_, fn := c.GetFlagCompletionFunc(f.Name)
			_, file := f.Annotations[cobra.BashCompFilenameExt]
			_, dir := f.Annotations[cobra.BashCompSubdirsInDir]
			if !fn && !file && !dir {
				t.Errorf("tether %s --%s: its value has no completion", c.Name(), f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cli.Command())
	if n < 40 {
		t.Errorf("only %d flags with values found: the walk misses commands", n)
	}
}

// TestFlagValueCompletion asks tether itself, as a shell's completion
// does (cobra's __complete), for a few flags' values.
func TestFlagValueCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--mechanism", ""}, []string{"auto", "cgroup", "fallback"}},
		{[]string{"start", "--limits", ""}, []string{"strict", "best-effort"}},
		{[]string{"logs", "--stream", ""}, []string{"out", "err"}},
		{[]string{"kill", "-s", ""}, []string{"TERM", "HUP", "KILL"}},
		{[]string{"start", "--owner", ""}, []string{"parent", "none"}},
		{[]string{"run", "--timeout", ""}, []string{"1m"}},
	} {
		code, out, stderr := tether(t, append([]string{"__complete"}, c.args...)...)
		lines := strings.Split(out, "\n")
		for _, w := range c.want {
			found := false
			for _, l := range lines {
				found = found || strings.SplitN(l, "\t", 2)[0] == w
			}
			if code != 0 || !found {
				t.Errorf("tether __complete %s = %d, %q (%s), want %q offered", strings.Join(c.args, " "), code, out, stderr, w)
			}
		}
		if !strings.Contains(out, ":4\n") && !strings.Contains(out, ":6\n") { // NoFileComp, with or without NoSpace
			t.Errorf("tether __complete %s: directive is not NoFileComp:\n%s", strings.Join(c.args, " "), out)
		}
	}
}
