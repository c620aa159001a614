package sessionlog

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/registry"
)

// FuzzLogEntry: any line is a log entry or errMalformed, never a panic; a
// decoded entry encodes back to the same line, and headers and gaps
// decode to sane numbers.
func FuzzLogEntry(f *testing.F) {
	t0 := time.Date(2026, 12, 1, 4, 0, 0, 123456789, time.UTC)
	for _, b := range [][]byte{
		appendEntry(nil, appendTime(nil, t0), kindOut, []byte("hello")),
		appendEntry(nil, appendTime(nil, t0), kindErrPart, []byte("\xff\xfe partial")),
		headerEntry(t0, 3, "0123456789abcdef0123456789abcdef"),
		gapEntry(t0, 100, 2, "no space left on device"),
		[]byte("2026-12-01T04:00:00.123456789Z ! dropped bytes=-1 lines=99999999999999999999 error="),
		[]byte("2026-12-01T04:00:00.123456789Z # tether-log 1 seq=-4"),
		[]byte("2026-13-01T04:00:00.123456789Z O x"), []byte("short"), {},
	} {
		f.Add(bytes.TrimSuffix(b, []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := parseEntry(line)
		if err != nil {
			return
		}
		if bytes.IndexByte(line, '\n') < 0 {
			if got := appendEntry(nil, line[:tsLen], e.Kind, e.Payload); !bytes.Equal(got[:len(got)-1], line) {
				t.Errorf("parseEntry(%q) re-encodes as %q", line, got)
			}
		}
		if n, ok := parseHeader(e); ok && n < 0 {
			t.Errorf("parseHeader(%q) = %d", line, n)
		}
		parseGap(e)
		entryStats(line)
	})
}

// FuzzLogView: any bytes as a session's log file (and as a rotated
// generation beside it) are shown in every view without a panic
// or a hang, and the JSON view is JSON Lines.
func FuzzLogView(f *testing.F) {
	t0 := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	var good []byte
	good = append(good, headerEntry(t0, 0, "")...)
	good = appendEntry(good, appendTime(nil, t0), kindOut, []byte("one"))
	good = appendEntry(good, appendTime(nil, t0.Add(time.Second)), kindErrPart, []byte("prompt> "))
	good = append(good, gapEntry(t0, 10, 1, "ENOSPC")...)
	good = appendEntry(good, appendTime(nil, t0.Add(2*time.Second)), kindErr, []byte("two"))
	f.Add(good, []byte{}, uint8(0))
	f.Add(good[:len(good)/2], good, uint8(0xff))
	f.Add([]byte("garbage\n\x00\n"), []byte("2026-12-01T04:00:00.000000000Z # tether-log 1 seq=9\n"), uint8(3))
	dir := f.TempDir()
	now := time.Now().UTC()
	rec := &registry.Record{Name: "fz", Kind: "session", State: registry.StateStopped, CreatedAt: now, UpdatedAt: now}
	f.Fuzz(func(t *testing.T, cur, old []byte, opts uint8) {
		p := filepath.Join(dir, "fz.log")
		if err := os.WriteFile(p, cur, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(p + ".1")
		if opts&1 != 0 {
			if err := os.WriteFile(p+".1", old, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		o := ViewOptions{Tail: int(opts>>4) - 1, Timestamps: opts&2 != 0, JSON: opts&4 != 0, Notes: &bytes.Buffer{}}
		switch opts & 0x0c {
		case 0x08:
			o.Stream = "out"
		case 0x0c:
			o.Stream = "err"
		}
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() {
			v := NewView("fz", &out, o)
			tl, err := OpenTail(p, v)
			if err != nil {
				done <- err
				return
			}
			defer tl.Close()
			v.EndInitial()
			done <- v.Finish(rec)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Logs hung on %q / %q with %+v", cur, old, o)
		}
		if o.JSON {
			for _, l := range bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n")) {
				if len(l) > 0 && !json.Valid(l) {
					t.Errorf("Logs --json wrote %q", l)
				}
			}
		}
	})
}
