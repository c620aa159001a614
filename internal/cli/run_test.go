package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/contain"
	"github.com/tether-run/tether/internal/testuser"
	"github.com/tether-run/tether/limits"
	"github.com/tether-run/tether/receipt"
)

// runWant is tether run of argv with every flag at its default, then
// changed by mod.
func runWant(t *testing.T, argv []string, mod func(*runOptions)) *runOptions {
	t.Helper()
	term, err := parseSignal("TERM") // 0 on Windows
	if err != nil {
		t.Fatal(err)
	}
	o := &runOptions{
		runFlags: runFlags{
			grace: contain.DefaultGrace, killWait: contain.DefaultKillWait, receiptFD: -1,
			containFlags: containFlags{mechanism: "auto"},
			commandFlags: commandFlags{signal: "TERM"},
			limitFlags:   limitFlags{limitsMode: "strict"},
		},
		argv: argv, stopSig: term,
	}
	if mod != nil {
		mod(o)
	}
	return o
}

// TestRunFlags: run's flags and command as parsed and checked, --env-file
// read, without running anything; its usage errors exit 125.
func TestRunFlags(t *testing.T) {
	dir := testuser.TempDir(t)
	envFile := filepath.Join(dir, "ci.env")
	if err := os.WriteFile(envFile, []byte("A=1\nB=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	receiptFile := filepath.Join(dir, "run.json")
	ceiling, err := limits.ParseStorage(dir + "=2G")
	if err != nil {
		t.Fatal(err)
	}
	none := ""
	checkFlags(t, "run", ExitTether, newRunCmdRun, []flagCase[runOptions]{
		{[]string{"--", "true"}, runWant(t, []string{"true"}, nil), ""},
		{[]string{"make", "-k"}, runWant(t, []string{"make", "-k"}, nil), ""},
		{[]string{"--grace", "0", "--timeout", "5", "-q", "--", "sleep", "9"}, runWant(t, []string{"sleep", "9"}, func(o *runOptions) {
			o.grace, o.timeout, o.quiet = contain.NoGrace, 5*time.Second, true
		}), ""},
		{[]string{"--mechanism", "fallback", "--stop-exec", "", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) {
			o.mechanism, o.mech, o.stopExec = "fallback", receipt.MechanismFallback, &none
		}), ""},
		{[]string{"--require", "cgroup", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) {
			o.require, o.mech = "cgroup", receipt.MechanismCgroup
		}), ""},
		{[]string{"--memory", "512M", "--pids", "10", "--limits", "best-effort", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) {
			o.memory, o.pids, o.limitsMode = "512M", "10", "best-effort"
			o.spec = limits.Spec{Memory: 512 << 20, Pids: 10}
		}), ""},
		{[]string{"--env-file", envFile, "-e", "B=2", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) {
			o.envFiles, o.env = []string{envFile}, []string{"B=2"}
			o.cmdEnv = mergeEnv(os.Environ(), []string{"A=1", "B=x", "B=2"})
		}), ""},
		{[]string{"--storage-max", dir + "=2G", "--scratch", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) {
			o.storageMax, o.maxStorage, o.scratch = []string{dir + "=2G"}, []limits.Storage{ceiling}, true
		}), ""},
		{[]string{"--pool", "ci", "--max", "2", "--pool-wait", "1m", "--no-reap", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) {
			o.pool, o.max, o.poolWait, o.noReap = "ci", 2, time.Minute, true
		}), ""},
		{[]string{"--receipt", receiptFile, "--receipt-overwrite", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) {
			o.receipt, o.receiptOverwrite = receiptFile, true
		}), ""},
		{[]string{"--receipt-fd", "3", "--", "true"}, runWant(t, []string{"true"}, func(o *runOptions) { o.receiptFD = 3 }), ""},
		{[]string{}, nil, "missing COMMAND"},
		{[]string{"--timeout", "soon", "--", "true"}, nil, "soon"},
		{[]string{"--kill-wait", "0", "--", "true"}, nil, "--kill-wait must be positive"},
		{[]string{"--mechanism", "box", "--", "true"}, nil, `--mechanism "box"`},
		{[]string{"--require", "gpu", "--", "true"}, nil, "the only requirement is cgroup"},
		{[]string{"--require", "cgroup", "--mechanism", "fallback", "--", "true"}, nil, "contradicts"},
		{[]string{"--cgroup-parent", "user.slice", "--", "true"}, nil, "must be an absolute path"},
		{[]string{"--max", "2", "--", "true"}, nil, "need --pool"},
		{[]string{"--pool", "ci", "--max", "-1", "--", "true"}, nil, "must not be negative"},
		{[]string{"--receipt-fd", "2", "--", "true"}, nil, "--receipt-fd 2"},
		{[]string{"--receipt", receiptFile, "--receipt-fd", "3", "--", "true"}, nil, "none of the others"},
		{[]string{"--receipt-overwrite", "--", "true"}, nil, "needs --receipt FILE"},
		{[]string{"--receipt", filepath.Join(dir, "no", "run.json"), "--", "true"}, nil, "directory"},
		{[]string{"--receipt", dir, "--", "true"}, nil, "is a directory"},
		{[]string{"--memory", "lots", "--", "true"}, nil, "--memory"},
		{[]string{"--limits", "loose", "--", "true"}, nil, `--limits "loose"`},
		{[]string{"--storage-max", "x", "--", "true"}, nil, "--storage-max"},
		{[]string{"--signal", "NOPE", "--", "true"}, nil, "--signal"},
		{[]string{"-e", "TETHER_RUN_ID=1", "--", "true"}, nil, "tether sets TETHER_RUN_ID"},
		{[]string{"--env-file", filepath.Join(dir, "missing.env"), "--", "true"}, nil, "--env-file"},
	})
}
