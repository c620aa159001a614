package sessionlog

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The on-disk log format. A session's log is one interleaved file per
// generation, one entry per line:
//
//	2026-12-01T04:00:00.123456789Z O the payload, any bytes but LF
//
// a fixed-width UTC timestamp with nanoseconds (30 bytes), a space, a kind
// byte, a space, the payload, LF. Kinds:
//
//	O, E   a line the command wrote to stdout, stderr; its LF is the entry's
//	o, e   part of a line with no LF yet: a partial line written after a
//	       quiet time (a prompt, a progress bar), one longer than
//	       maxEntryPayload, or the last bytes before the stream closed. The
//	       stream's next entry continues it.
//	#      the header, first in every file: "tether-log 1 seq=N run=ID", N counting
//	       the session's generations from 0, so a reader sees which ones
//	       were rotated away.
//	!      a gap: output dropped here (the disk refused it), with counts.
//
// A text prefix rather than JSON Lines: JSON strings cannot hold invalid
// UTF-8, and a command's output is bytes (a binary dump, a progress bar in
// another encoding), so JSON would need base64 or lose bytes, and costs
// an escape pass over every line. Here the payload is stored as written:
// the only byte it cannot hold is LF, which is what ends a line anyway, so
// the plain view is the payloads concatenated, each full entry followed
// by its LF — exactly the bytes the command wrote, in order. The fixed
// width makes a timestamp cheap to write (formatted once per read) and to
// parse, and the files stay greppable and sortable by their first field.
const (
	tsLayout  = "2006-01-02T15:04:05.000000000Z"
	tsLen     = len(tsLayout)
	prefixLen = tsLen + 3 // timestamp, space, kind, space

	kindOut, kindErr         = 'O', 'E'
	kindOutPart, kindErrPart = 'o', 'e'
	kindHeader, kindGap      = '#', '!'

	headerMagic = "tether-log 1"

	// maxEntryPayload bounds an entry: a longer line is stored as partial
	// entries of this size, so a reader's memory and a rotation's overshoot
	// stay bounded whatever the command writes (docker splits at 16 KiB too).
	maxEntryPayload = 16 << 10
)

// entry is one decoded log entry; Payload aliases the reader's buffer.
type entry struct {
	Time    time.Time
	Kind    byte
	Payload []byte
}

// stream returns "out" or "err" for output entries, "" for others.
func (e *entry) stream() string {
	switch e.Kind {
	case kindOut, kindOutPart:
		return "out"
	case kindErr, kindErrPart:
		return "err"
	}
	return ""
}

// full reports whether the entry ends a line (its LF was written).
func (e *entry) full() bool { return e.Kind == kindOut || e.Kind == kindErr }

// appendTime appends t's fixed-width form.
func appendTime(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, tsLayout)
}

// appendEntry appends one encoded entry; payload must hold no LF.
func appendEntry(b []byte, ts []byte, kind byte, payload []byte) []byte {
	b = append(b, ts...)
	b = append(b, ' ', kind, ' ')
	b = append(b, payload...)
	return append(b, '\n')
}

var errMalformed = errors.New("malformed log entry")

// parseEntry decodes line (without its LF).
func parseEntry(line []byte) (entry, error) {
	if len(line) < prefixLen || line[tsLen] != ' ' || line[tsLen+2] != ' ' {
		return entry{}, errMalformed
	}
	t, err := time.Parse(tsLayout, string(line[:tsLen]))
	if err != nil {
		return entry{}, errMalformed
	}
	return entry{Time: t, Kind: line[tsLen+1], Payload: line[prefixLen:]}, nil
}

// headerEntry returns the encoded header of generation seq of the log of
// run runID (the run_id of the session's record and receipt; omitted when
// empty).
func headerEntry(t time.Time, seq int, runID string) []byte {
	p := fmt.Appendf(nil, "%s seq=%d", headerMagic, seq)
	if runID != "" {
		p = fmt.Appendf(p, " run=%s", runID)
	}
	return appendEntry(nil, appendTime(nil, t), kindHeader, p)
}

// parseHeader returns the generation number of a header entry. Fields
// after it (run=) are for people and tools reading the file.
func parseHeader(e entry) (int, bool) {
	rest, ok := bytes.CutPrefix(e.Payload, []byte(headerMagic+" seq="))
	if e.Kind != kindHeader || !ok {
		return 0, false
	}
	num, _, _ := bytes.Cut(rest, []byte{' '})
	n, err := strconv.Atoi(string(num))
	return n, err == nil && n >= 0
}

// gapEntry encodes a gap: what was dropped since first, and why.
func gapEntry(first time.Time, bytes, lines int64, why string) []byte {
	return appendEntry(nil, appendTime(nil, first), kindGap, fmt.Appendf(nil, "dropped bytes=%d lines=%d error=%s", bytes, lines, why))
}

// gap is a decoded gap entry.
type gap struct {
	At           time.Time
	Bytes, Lines int64
	Error        string
}

func parseGap(e entry) (gap, bool) {
	g := gap{At: e.Time}
	rest, ok := bytes.CutPrefix(e.Payload, []byte("dropped "))
	if !ok {
		return g, false
	}
	if _, err := fmt.Sscanf(string(rest), "bytes=%d lines=%d", &g.Bytes, &g.Lines); err != nil {
		return g, false
	}
	if _, why, ok := bytes.Cut(rest, []byte(" error=")); ok {
		g.Error = string(why)
	}
	return g, true
}

// entryStats returns the output bytes and lines that encoded entries b
// carry: what is lost when they are dropped. Headers and gaps carry none.
func entryStats(b []byte) (n, lines int64) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b) - 1
		}
		if e, err := parseEntry(b[:i]); err == nil && e.stream() != "" {
			n += int64(len(e.Payload))
			if e.full() {
				n++
				lines++
			}
		}
		b = b[i+1:]
	}
	return n, lines
}
