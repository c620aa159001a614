package store

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/tether-run/tether/receipt"
	"github.com/tether-run/tether/registry"
)

// encodeSamples are strings that exercise every escape of encoding/json.
var encodeSamples = []string{
	"", "run-0123abcd", "plain words", `quote " and \ backslash`, "<html> & </html>",
	"\b\f\n\r\t\x00\x01\x1f\x7f", "ünïcødé ✓ 日本", "\u2028 and \u2029", "bad \xff\xfe utf-8", "\xe2\x82",
	"/sys/fs/cgroup/unified/tether-8e26bb541623f786",
}

// fillRecord sets every field of rec by its kind, each to a zero or a
// non-zero value (all non-zero when full), so that a field registry.Record gains
// is filled too without this test changing.
func fillRecord(rng *rand.Rand, rec *registry.Record, full bool) {
	v := reflect.ValueOf(rec).Elem()
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -7*3600)}
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		zero := !full && rng.IntN(3) == 0
		if zero {
			f.SetZero()
			continue
		}
		switch f.Interface().(type) {
		case string:
			s := encodeSamples[1+rng.IntN(len(encodeSamples)-1)]
			f.SetString(s)
		case []string:
			n := rng.IntN(4)
			if full {
				n++
			}
			ss := make([]string, n)
			for j := range ss {
				ss[j] = encodeSamples[rng.IntN(len(encodeSamples))]
			}
			f.Set(reflect.ValueOf(ss))
		case int:
			f.SetInt(int64(1 + rng.IntN(1000)))
		case uint64:
			f.SetUint(1 + rng.Uint64()>>rng.IntN(64))
		case time.Time:
			t := time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).In(zones[rng.IntN(len(zones))])
			f.Set(reflect.ValueOf(t))
		case *receipt.Exit, *receipt.OutputLoss:
			f.SetZero() // non-nil ones take encoding/json's way; see below
		default:
			panic("fillRecord: a registry.Record field of a kind this test does not fill: " + v.Type().Field(i).Name + " " + f.Type().String())
		}
	}
}

// TestAppendRecordMatchesJSON: the record writer's bytes are
// json.MarshalIndent's, for records with every field set, with random
// fields zero, and with the nested values that take encoding/json's way.
func TestAppendRecordMatchesJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(rec *registry.Record) {
		t.Helper()
		want, werr := json.MarshalIndent(rec, "", "  ")
		got, gerr := appendRecord(nil, rec)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("errors differ: encoding/json %v, appendRecord %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("appendRecord differs from json.MarshalIndent:\ngot:\n%s\nwant:\n%s", got, want)
		}
	}
	check(&registry.Record{})
	for i := range 2000 {
		rec := &registry.Record{}
		fillRecord(rng, rec, i%4 == 0)
		check(rec)
	}
	for _, s := range encodeSamples {
		check(&registry.Record{Name: s, Argv: []string{s}, Caveats: []string{s, s}})
	}
	rec := &registry.Record{}
	fillRecord(rng, rec, true)
	rec.Exit = &receipt.Exit{Code: 3}
	check(rec)
	rec.Exit, rec.OutputLoss = nil, &receipt.OutputLoss{}
	check(rec)
	check(&registry.Record{CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}) // both refuse the year
}

// BenchmarkEncodeRecord: a run's record through the writer (the first use
// in a process is what a tether run pays; encoding/json's first is
// 130–270 µs there).
func BenchmarkEncodeRecord(b *testing.B) {
	rec := &registry.Record{Name: "run-0123456789ab", Kind: "run", State: registry.StateRunning, RunID: "r", Argv: []string{"true"}, Cwd: "/tmp",
		CreatedAt: time.Now(), UpdatedAt: time.Now(), Owner: "none", Supervisor: "b:1:2:3", Mechanism: "cgroup", Cgroup: "/sys/fs/cgroup/x", CgroupID: 9, Until: "main-exit"}
	for b.Loop() {
		if _, err := encodeRecord(rec); err != nil {
			b.Fatal(err)
		}
	}
}
