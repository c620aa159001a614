package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/registry"
)

// completeSessions completes the session names a command takes: the live
// sessions, the ones stop and exec can act on, and with ended also the
// ended ones (status, logs and wait read their records). many lets every
// argument be a name (stop); otherwise only the first is. Each name comes
// with its state and command, which zsh and fish show beside it.
func completeSessions(e *env, ended, many bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 && !many {
			if cmd.Name() == "exec" {
				return nil, cobra.ShellCompDirectiveDefault // COMMAND and its args
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		reg, err := openRegistry(e)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list := reg.ListLive
		if ended {
			list = reg.List
		}
		recs, _ := list()
		given := map[string]bool{}
		for _, a := range args {
			given[a] = true
		}
		var out []cobra.Completion
		for _, r := range recs {
			if given[r.Name] || !strings.HasPrefix(r.Name, toComplete) || (!ended && !r.Live()) {
				continue
			}
			out = append(out, cobra.CompletionWithDesc(r.Name, describe(r)))
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// describe is a session's completion description: state and command, on
// one line (completion output is a line per candidate: a newline or tab
// in an argv would make candidates of its own), cut to 60 runes.
func describe(r *registry.Record) string {
	return commandText([]string{r.State + ":", commandText(r.Argv, 1<<20)}, 60)
}

// addCompletionCmd adds cobra's `completion` command, for bash, zsh and
// fish (tether runs on Linux only: no powershell), with examples.
func addCompletionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	var comp *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			comp = c
		}
	}
	if comp == nil {
		return
	}
	// Runnable, so that its NoArgs is checked: `tether completion tcsh`
	// is a usage error, not the help with exit 0.
	comp.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	comp.Example = `  source <(tether completion bash)
  tether completion zsh > "${fpath[1]}/_tether"
  tether completion fish > ~/.config/fish/completions/tether.fish`
	examples := map[string]string{
		"bash": `  source <(tether completion bash)                     # this shell only
  tether completion bash > /etc/bash_completion.d/tether # every new shell`,
		"zsh": `  source <(tether completion zsh)                    # this shell only
  tether completion zsh > "${fpath[1]}/_tether"      # every new shell`,
		"fish": `  tether completion fish | source                                # this shell only
  tether completion fish > ~/.config/fish/completions/tether.fish # every new shell`,
	}
	for _, c := range comp.Commands() {
		if ex, ok := examples[c.Name()]; ok {
			c.Example = ex
		} else {
			comp.RemoveCommand(c)
		}
	}
}
