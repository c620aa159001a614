package cli

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagValues are the completions of flag values by flag name, the same
// for every command that has the flag: a fixed list or a list read from
// the registry. A flag taking a value that is not here, nor in
// fileFlags, nor given a completion by its command, fails
// TestEveryFlagCompletes: its value would complete as a file name.
func flagValues(e *env) map[string]cobra.CompletionFunc {
	none := cobra.FixedCompletions(nil, cobra.ShellCompDirectiveNoFileComp)
	fixed := func(vs ...string) cobra.CompletionFunc {
		return cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp)
	}
	durations := fixed("10s", "30s", "1m", "5m", "1h")
	sizes := fixed("256M", "512M", "1G", "4G")
	return map[string]cobra.CompletionFunc{
		// Durations.
		"timeout": durations, "grace": durations, "kill-wait": durations, "ttl": durations,
		"ready-timeout": durations, "prune": fixed("24h", "168h"), "older": fixed("1h", "24h", "7d"), "pool-wait": durations, "since": fixed("10m", "1h", "24h"),
		// Sizes and counts.
		"memory": sizes, "memory-high": sizes, "swap": fixed("0", "512M", "1G"), "log-max": fixed("1M", "8M", "32M"),
		"cpus": fixed("0.5", "1", "2"), "pids": fixed("64", "256", "1024"), "log-keep": fixed("2", "4"),
		"max": fixed("1", "2", "4"), "tail": fixed("10", "50", "100"), "lines": fixed("0", "10", "50"),
		"receipt-fd": fixed("3"),
		// Choices.
		"mechanism": fixed("auto", "cgroup", "fallback"), "require": fixed("cgroup"),
		"limits": fixed("strict", "best-effort"), "stream": fixed("out", "err"),
		"signal": fixed(completionSignals...),
		"ready": cobra.FixedCompletions([]cobra.Completion{"tcp:", "unix:", "file:", "log:", "exec:"},
			cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace),
		// Names.
		"name": none, "env": none, "stop-exec": none,
		"owner": completeOwner(e),
		"pool":  completePools(e),
	}
}

// fileFlags take a file name (false) or a directory (true), which the
// shell completes.
var fileFlags = map[string]bool{"receipt": false, "env-file": false, "require-free": false, "storage-max": true, "cgroup-parent": true}

// completionSignals are the signal names offered where a flag takes one.
var completionSignals = []string{"TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "KILL"}

// completeFlags gives every flag of every command of root that takes a
// value and has no completion of its own the one flagValues names.
func completeFlags(e *env, root *cobra.Command) {
	values := flagValues(e)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if f.NoOptDefVal != "" { // a bool: no value to complete
				return
			}
			if _, ok := c.GetFlagCompletionFunc(f.Name); ok {
				return
			}
			if fn, ok := values[f.Name]; ok {
				c.RegisterFlagCompletionFunc(f.Name, fn)
			} else if dir, ok := fileFlags[f.Name]; ok && dir {
				c.MarkFlagDirname(f.Name)
			} else if ok {
				c.MarkFlagFilename(f.Name)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeOwner offers --owner's forms: parent, none, and session:NAME
// for each live session.
func completeOwner(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		out := []cobra.Completion{"parent", "none"}
		if reg, err := openRegistry(e); err == nil {
			recs, _ := reg.ListLive()
			for _, r := range recs {
				out = append(out, cobra.CompletionWithDesc("session:"+r.Name, describe(r)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePools offers the pools this user's sessions belong to.
func completePools(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		reg, err := openRegistry(e)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		recs, _ := reg.List()
		seen := map[string]bool{}
		var out []cobra.Completion
		for _, r := range recs {
			if r.Pool != "" && !seen[r.Pool] && strings.HasPrefix(r.Pool, toComplete) {
				seen[r.Pool] = true
				out = append(out, r.Pool)
			}
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
