//go:build unix || windows

package store

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/tether-run/tether/registry"
)

// argvOf returns n arguments of size bytes of c each.
func argvOf(n, size int, c string) []string {
	argv := make([]string, n)
	for i := range argv {
		argv[i] = strings.Repeat(c, size)
	}
	return argv
}

// TestCheckSize (issue 22): a start's record is refused when it, with
// room for what its supervisor adds later, would be over the 1 MiB a
// record is read back with; the message names the size and the limit.
func TestCheckSize(t *testing.T) {
	for _, c := range []struct {
		name string
		argv []string
		cwd  string
		ok   bool
	}{
		{"small", []string{"sleep", "1000"}, "/home/u", true},
		{"800 KiB of arguments", argvOf(800, 1024, "a"), "/home/u", true},
		{"1 MiB of arguments", argvOf(1024, 1024, "a"), "/home/u", false},
		// 900 KiB as written, over 4 MiB as JSON (\u003c).
		{"escapes counted as written", argvOf(900, 1024, "<"), "/home/u", false},
		{"under 1 MiB, without room for later", argvOf(960, 1024, "a"), "/home/u", false},
		{"a long command name is counted again", []string{strings.Repeat("c", 70<<10)}, "/", false},
		{"a long working directory is counted again", []string{"true"}, "/" + strings.Repeat("d", 70<<10), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckSize(&registry.Record{Name: "big", Kind: "session", State: registry.StateStarting, Argv: c.argv, Cwd: c.cwd})
			if c.ok != (err == nil) || err != nil && (!errors.Is(err, registry.ErrTooLarge) || !strings.Contains(err.Error(), "over the 1 MiB limit of a record") || !strings.HasPrefix(err.Error(), `session "big": `)) {
				t.Errorf("CheckSize() = %v, want ok %t (else registry.ErrTooLarge naming the session and the limit)", err, c.ok)
			}
		})
	}
}

// TestWriteRefusesRecordTooLarge (issue 22): no write makes a record that
// Read refuses. One of exactly maxRecord bytes is written and read back;
// one byte more is refused and nothing is left where it would have gone.
func TestWriteRefusesRecordTooLarge(t *testing.T) {
	r, err := Open(stateDir(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := &registry.Record{Name: "edge", Kind: "run", State: registry.StateRunning, Argv: []string{""}}
	b, err := encodeRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.Argv[0] = strings.Repeat("a", maxRecord-len(b))
	if err := r.Write(rec); err != nil {
		t.Fatalf("Write(a record of exactly %d bytes) = %v", maxRecord, err)
	}
	if got, err := r.Read("edge"); err != nil || got.Argv[0] != rec.Argv[0] {
		t.Fatalf("Read(a record of exactly %d bytes) = %v", maxRecord, err)
	}
	rec.Argv[0] += "a"
	if err := r.Write(rec); !errors.Is(err, registry.ErrTooLarge) {
		t.Errorf("Write(a record of %d bytes) = %v, want registry.ErrTooLarge", maxRecord+1, err)
	}
	if got, err := r.Read("edge"); err != nil || len(got.Argv[0]) != len(rec.Argv[0])-1 {
		t.Errorf("after a refused Write the record is %v; want the one before", err)
	}
	big := &registry.Record{Name: "big", Kind: "run", State: registry.StateRunning, Argv: argvOf(1100, 1024, "a")}
	if err := r.Create(big); !errors.Is(err, registry.ErrTooLarge) {
		t.Errorf("Create(1.1 MiB) = %v, want registry.ErrTooLarge", err)
	}
	if _, err := os.Lstat(r.recordPath("big")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused Create left %s (%v)", r.recordPath("big"), err)
	}
}
