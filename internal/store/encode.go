//go:build unix || windows

package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tether-run/tether/registry"
)

// appendRecord appends rec as appendFields does, or fails wrapping
// registry.ErrTooLarge when the record file (it and a newline) would be larger
// than Read accepts: a record that cannot be read back is never written
// (issue 22), whatever called for it.
func appendRecord(b []byte, rec *registry.Record) ([]byte, error) {
	start := len(b)
	b, err := appendFields(b, rec)
	if n := len(b) - start + 1; err == nil && n > maxRecord {
		return b[:start], registry.Errorf(rec.Name, registry.ErrTooLarge, "record not written: %s, over the %s limit of a record", mib(n), mib(maxRecord))
	}
	return b, err
}

// appendFields appends rec exactly as json.MarshalIndent(rec, "", "  ")
// writes it, without reflection. encoding/json builds its encoder for a
// type on first use, and for registry.Record that cost 130–270 µs of every tether
// run (which writes one record and exits); this costs 2 µs. A record that
// holds the rarely set nested Exit or OutputLoss (an ended session) goes
// through encoding/json. TestAppendRecordMatchesJSON holds the two to the
// same bytes for every field, so a field added to registry.Record and not here
// fails it.
func appendFields(b []byte, rec *registry.Record) ([]byte, error) {
	if rec.Exit != nil || rec.OutputLoss != nil {
		j, err := json.MarshalIndent(rec, "", "  ")
		return append(b, j...), err
	}
	w := recordWriter{b: append(b, '{')}
	w.int("schema_version", int64(rec.SchemaVersion))
	w.str("name", rec.Name)
	w.str("kind", rec.Kind)
	w.str("state", rec.State)
	w.str("run_id", rec.RunID)
	w.strs("argv", rec.Argv)
	w.str("cwd", rec.Cwd)
	w.time("created_at", rec.CreatedAt)
	w.time("updated_at", rec.UpdatedAt)
	w.str("owner", rec.Owner)
	w.optStr("owner_token", rec.OwnerToken)
	w.optStr("supervisor", rec.Supervisor)
	w.optStr("main", rec.Main)
	w.optStr("marker", rec.Marker)
	w.optStr("mechanism", rec.Mechanism)
	w.optStr("cgroup", rec.Cgroup)
	if rec.CgroupID != 0 {
		w.uint("cgroup_id", rec.CgroupID)
	}
	w.optStrs("v1_cgroups", rec.V1Cgroups)
	w.str("runtime_dir", rec.RuntimeDir)
	w.str("log", rec.Log)
	w.optStr("profile", rec.Profile)
	w.str("until", rec.Until)
	if !rec.ExpiresAt.IsZero() {
		w.time("expires_at", rec.ExpiresAt)
	}
	w.optStr("pool", rec.Pool)
	w.optStr("stop_signal", rec.StopSignal)
	w.optStrs("caveats", rec.Caveats)
	w.optStr("stop_reason", rec.StopReason)
	w.optStr("receipt", rec.Receipt)
	w.optStr("error", rec.Error)
	if w.err != nil {
		return b, w.err
	}
	return append(w.b, '\n', '}'), nil
}

// recordWriter writes the members of one indented JSON object.
type recordWriter struct {
	b   []byte
	n   int // members written
	err error
}

// key starts a member: the separator from the last one, the indent, the
// quoted name and the colon.
func (w *recordWriter) key(k string) {
	if w.n > 0 {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = append(w.b, "\n  "...)
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':', ' ')
}

func (w *recordWriter) str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

// optStr is an omitempty string.
func (w *recordWriter) optStr(k, v string) {
	if v != "" {
		w.str(k, v)
	}
}

// optStrs is an omitempty []string: nil and empty are left out.
func (w *recordWriter) optStrs(k string, v []string) {
	if len(v) > 0 {
		w.strs(k, v)
	}
}

func (w *recordWriter) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *recordWriter) uint(k string, v uint64) {
	w.key(k)
	w.b = strconv.AppendUint(w.b, v, 10)
}

func (w *recordWriter) time(k string, t time.Time) {
	w.key(k)
	j, err := t.MarshalJSON()
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("registry: record %s: %w", k, err)
	}
	w.b = append(w.b, j...)
}

// strs writes a []string member: null when nil, [] when empty, else one
// element a line.
func (w *recordWriter) strs(k string, v []string) {
	w.key(k)
	switch {
	case v == nil:
		w.b = append(w.b, "null"...)
		return
	case len(v) == 0:
		w.b = append(w.b, '[', ']')
		return
	}
	w.b = append(w.b, '[')
	for i, s := range v {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, "\n    "...)
		w.b = appendString(w.b, s)
	}
	w.b = append(w.b, "\n  ]"...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json writes it
// with its default HTML escaping: <, > and & as \u003c, \u003e, \u0026;
// control characters as \b, \f, \n, \r, \t or \u00XX; invalid UTF-8 as
// \ufffd; U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
