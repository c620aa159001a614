package sessionlog

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/tether-run/tether/internal/store"
)

// TestCaptureRoundTrip: whatever bytes a command writes (binary, LF-free
// runs longer than an entry, tiny writes), each stream's view is exactly
// what was written to it, across rotations.
func TestCaptureRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.log")
	log, err := Open(path, MinMax, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr, c, err := StartCapture(log)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var want [2]bytes.Buffer
	for i := 0; i < 2000; i++ {
		s := rng.IntN(2)
		b := make([]byte, rng.IntN(3000))
		for j := range b {
			b[j] = byte(rng.IntN(256))
		}
		if rng.IntN(10) == 0 {
			b = append(b, bytes.Repeat([]byte{'z'}, 40000)...)
		}
		want[s].Write(b)
		if _, err := []interface{ Write([]byte) (int, error) }{stdout, stderr}[s].Write(b); err != nil {
			t.Fatal(err)
		}
	}
	stdout.Close()
	stderr.Close()
	c.End()
	log.Close()
	if files := store.LogFiles(path); len(files) < 10 {
		t.Errorf("%d log files, want the log to have rotated ten times or more", len(files))
	}
	for s, name := range []string{"out", "err"} {
		var got, notes bytes.Buffer
		v := NewView("s", &got, ViewOptions{Tail: -1, Stream: name, Notes: &notes})
		tl, err := OpenTail(path, v)
		if err != nil {
			t.Fatal(err)
		}
		v.EndInitial()
		if err := v.Finish(nil); err != nil {
			t.Fatal(err)
		}
		tl.Close()
		if !bytes.Equal(got.Bytes(), want[s].Bytes()) || notes.Len() > 0 {
			i := 0
			for i < got.Len() && i < want[s].Len() && got.Bytes()[i] == want[s].Bytes()[i] {
				i++
			}
			t.Errorf("std%s view: %d bytes, want %d; first difference at %d; notes %q", name, got.Len(), want[s].Len(), i, notes.String())
		}
	}
	if l := log.Loss(); l != nil {
		t.Errorf("loss %+v, want none", l)
	}
}
