package reap_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/internal/identity"
	"github.com/tether-run/tether/internal/reap"
	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/registry"
)

// FuzzReapRecord: reap over a state dir holding one record of any bytes
// (in records/ or ended/, with or without its runtime dir) never panics,
// never hangs, and never acts on what it cannot prove: no fuzzed record
// can name a leaf whose id matches or a process whose token matches, so
// none is ever stopped, and every record is accounted for (issue 15).
// "BOOT" in the input becomes this boot's id, so that the dead-supervisor
// paths are reached, not only other-boot.
func FuzzReapRecord(f *testing.F) {
	now := time.Now().UTC()
	rec := registry.Record{SchemaVersion: 1, Name: "fz", Kind: "session", State: registry.StateRunning, CreatedAt: now, UpdatedAt: now,
		Supervisor: "linux:BOOT:999999:1:1", Main: "linux:BOOT:999998:1:1", Owner: "none", Until: "main-exit"}
	add := func(edit func(r *registry.Record), flags uint8) {
		r := rec
		edit(&r)
		b, _ := json.Marshal(r)
		f.Add(b, flags)
	}
	add(func(r *registry.Record) {}, 0)
	add(func(r *registry.Record) { r.Main = "" }, 2)
	add(func(r *registry.Record) { r.Kind = "run" }, 0)
	add(func(r *registry.Record) { r.Cgroup, r.CgroupID = "/sys/fs/cgroup/unified", 1 }, 0)
	add(func(r *registry.Record) {
		r.State, r.Cgroup, r.CgroupID = registry.StateStopped, "/sys/fs/cgroup/unified", 1
	}, 3)
	add(func(r *registry.Record) {
		r.Cgroup, r.V1Cgroups = "/sys/fs/cgroup/unified/tether-0123456789abcdef", []string{"/sys/fs/cgroup/memory/tether-0123456789abcdef", "/etc"}
	}, 0)
	add(func(r *registry.Record) { r.Supervisor = "linux:other-boot:1:1:1" }, 2)
	add(func(r *registry.Record) { r.State = registry.StateStarting; r.Supervisor = "" }, 0)
	add(func(r *registry.Record) { r.Name = "../fz" }, 0)
	f.Add([]byte("\x00not json"), uint8(1))
	f.Add([]byte(`{"schema_version":1,"name":"fz","state":"stopped","exit":null,"output_loss":{}}`), uint8(7))
	boot, err := identity.BootID()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, flags uint8) {
		b = bytes.ReplaceAll(b, []byte("BOOT"), []byte(boot))
		state := filepath.Join(t.TempDir(), "state")
		reg, err := store.Open(state)
		if err != nil {
			t.Fatal(err)
		}
		defer reg.Close() // it holds the state dir and its subdirectories open
		dir := "records"
		if flags&1 != 0 {
			dir = "ended"
		}
		if err := os.WriteFile(filepath.Join(state, dir, "fz.json"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if flags&2 != 0 {
			if _, err := reg.Claim("fz"); err != nil {
				t.Fatal(err)
			}
		}
		o := reap.Options{Quick: flags&4 != 0, Grace: 10 * time.Millisecond}
		if flags&8 != 0 {
			o.Prune = time.Nanosecond
		}
		done := make(chan *reap.Report, 1)
		go func() { done <- reap.Run(reg, o) }()
		var rep *reap.Report
		select {
		case rep = <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("reap hung on record %q", b)
		}
		for _, a := range rep.Actions {
			switch {
			case a.Class == reap.DeadLeaf:
				t.Errorf("reap stopped a leaf named by a fuzzed record: %+v from %q", a, b)
			case a.Receipt != nil && a.Receipt.Evidence.Signalled > 0:
				t.Errorf("reap signalled a process named by a fuzzed record: %+v from %q", a, b)
			}
		}
		for _, ol := range rep.OrphanLeaves {
			if ol.Removed {
				t.Errorf("reap removed an orphan leaf %s without --orphan-leaves", ol.Path)
			}
		}
	})
}
