// Package cli is tether's command line: one file per subcommand, the only
// place that reads flags, prints, or chooses exit codes.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tether-run/tether/session"
	"github.com/tether-run/tether/version"
)

// Exit codes shared by all commands. tether run passes the command's own
// code through and uses 124–127 for its own outcomes, as timeout(1) does.
const (
	ExitOK       = 0
	ExitFailure  = 1   // an operational failure of a non-run command
	ExitUsage    = 2   // a usage error of a non-run command
	ExitTimeout  = 124 // tether run: the timeout expired
	ExitTether   = 125 // tether run: tether failed, or bad usage
	ExitNotExec  = 126 // tether run: the command could not be executed
	ExitNotFound = 127 // tether run: the command was not found
)

// exitError carries an exit code up to Main. A nil err means the message
// was already printed (or there is none).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exit returns an error that makes Main exit with code, printing err if it
// is not nil.
func exit(code int, err error) error { return &exitError{code: code, err: err} }

// env is what commands read and write besides their flags.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

func (e *env) warnf(format string, a ...any) {
	fmt.Fprintf(e.stderr, "tether: "+format+"\n", a...)
}

// Tether is the whole tether program, what cmd/tether's main runs (and
// a test binary acting as tether): a session's supervisor, which is this
// binary started again, runs here and exits; otherwise standard output
// and error are made safe to write to a closed pipe and the command line
// is run. It returns the exit status.
func Tether() int {
	session.MaybeSupervise()
	survivePipes()
	return Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// Main runs tether with args (without the program name) and returns the
// process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	root := newRoot(e, args)
	root.SetArgs(args)
	if cmd, _, ferr := root.Find(args); ferr == nil && (cmd.Name() == "run" || cmd.Name() == "start") {
		if err := checkFDLimit(); err != nil {
			e.warnf("%v", err)
			if cmd.Name() == "run" {
				return ExitTether
			}
			return ExitFailure
		}
	}
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			e.warnf("%v", ee.err)
		}
		return ee.code
	}
	e.warnf("%v", err)
	name := ""
	if cmd, _, ferr := root.Find(args); ferr == nil {
		name = cmd.Name()
	}
	return exitCode(name, err)
}

// exitCode is the exit status err means for command name: an exitError's
// own code; for flag and argument errors from cobra itself, ExitTether for
// run and exec (as timeout(1)'s usage errors), else ExitUsage.
func exitCode(name string, err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case name == "run" || name == "exec":
		return ExitTether
	}
	return ExitUsage
}

// Command returns tether's command tree, for what documents it (man
// pages: internal/mangen). Running it is Main's job.
func Command() *cobra.Command {
	return newRoot(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, nil)
}

// subcommands are tether's commands by name, in the order help lists them.
var subcommands = []struct {
	name string
	make func(*env) *cobra.Command
}{
	{"run", newRunCmd}, {"start", newStartCmd}, {"ls", newLsCmd}, {"status", newStatusCmd}, {"inspect", newInspectCmd},
	{"stop", newStopCmd}, {"restart", newRestartCmd}, {"kill", newKillCmd}, {"logs", newLogsCmd}, {"wait", newWaitCmd},
	{"rm", newRmCmd}, {"prune", newPruneCmd}, {"reap", newReapCmd},
	{"exec", newExecCmd}, {"env", newEnvCmd}, {"doctor", newDoctorCmd}, {"mcp", newMCPCmd},
}

// newRoot builds the command tree for args. When args name a command
// plainly (`tether run ...`), the tree holds only that one: building all
// of them, their flags and help included, is a tenth of `tether run --
// true` (issue 13). Anything else — no command, a flag first, help,
// completion, an unknown name — gets the whole tree.
func newRoot(e *env, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "tether",
		Short: "Run commands so that everything they start has an owner",
		Long: `tether runs a command inside a fresh cgroup v2 leaf it owns, with a deadline,
and stops everything in it — setsid'd, double-forked and TERM-ignoring
descendants included — ending in kernel-confirmed emptiness and a JSON
receipt that proves it (tether run).

Long-lived daemons run as named sessions that stay reachable, listable and
stoppable after their caller and its scratch are gone, and stop when their
owner dies (tether start, ls, status, logs, wait, stop). tether reap
reclaims what crashed owners left behind, acting only on identity it can
prove. tether doctor explains what this host offers.

Durations take Go's form (10s, 1m30s) or bare seconds as timeout(1) does
(5, 0.5). Exit status: usage errors exit 2, except for tether run and
tether exec, whose own failures and usage errors exit 125 as timeout(1)'s
do.`,
		Example: `  tether run --timeout 20m -- npm run e2e
  tether start --name web -- python3 -m http.server 8000
  tether ls
  tether stop web
  source <(tether completion bash)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version: one line from the build info (module version, commit,
	// toolchain), the same build a receipt's "tether" names. A flag of our
	// own, not cobra's Version: its version template links text/template,
	// whose reflection keeps every method alive (+2.3 MB of binary).
	var showVersion bool
	root.Flags().BoolVar(&showVersion, "version", false, "print tether's version (module, commit, toolchain) and exit")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if showVersion {
			fmt.Fprintln(e.stdout, version.Get().String())
			return nil
		}
		return cmd.Help()
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetIn(e.stdin)
	if len(args) > 0 {
		for _, sc := range subcommands {
			if sc.name == args[0] {
				root.AddCommand(sc.make(e))
				gateCommands(root)
				// cobra would build its completion command and four
				// subcommands at Execute; none is reachable from here.
				root.CompletionOptions.DisableDefaultCmd = true
				return root
			}
		}
	}
	for _, sc := range subcommands {
		root.AddCommand(sc.make(e))
	}
	addCompletionCmd(root)
	completeFlags(e, root)
	gateCommands(root)
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Example = "  tether help stop"
			// cobra's own prints "Unknown help topic" and exits 0.
			c.Run, c.RunE = nil, func(hc *cobra.Command, args []string) error {
				cmd, _, err := hc.Root().Find(args)
				if cmd == nil || err != nil {
					return exit(ExitUsage, fmt.Errorf("no help topic %q: tether help lists the commands", strings.Join(args, " ")))
				}
				cmd.InitDefaultHelpFlag()
				return cmd.Help()
			}
		}
	}
	return root
}
