//go:build linux || windows || darwin

package sessionlog

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/tether-run/tether/registry"
)

// view turns a session's log entries into what ViewOptions ask for.
type View struct {
	name string
	w    io.Writer
	o    ViewOptions
	err  error // the first write error: once set, nothing more is written

	// The initial read, held while Tail may still drop its front.
	collecting bool
	held       []entry
	heldFull   int
	cut        bool // Tail dropped something
	first      *time.Time

	// Line views assemble a line's parts per stream.
	parts    [2][]byte
	partTime [2]time.Time

	marked    int64 // bytes the gap entries read say were dropped
	firstSeq  int   // generation of the first file read; -1 before
	malformed int
}

func NewView(name string, w io.Writer, o ViewOptions) *View {
	return &View{name: name, w: w, o: o, collecting: true, firstSeq: -1}
}

func (v *View) note(format string, args ...any) {
	if v.o.Notes != nil {
		fmt.Fprintf(v.o.Notes, "tether logs: %s: "+format+"\n", append([]any{v.name}, args...)...)
	}
}

func (v *View) write(b []byte) {
	if v.err == nil {
		_, v.err = v.w.Write(b)
	}
}

// add takes the next entry of the log.
func (v *View) add(e entry) {
	switch e.Kind {
	case kindHeader:
		return
	case kindGap:
		g, ok := parseGap(e)
		if !ok {
			v.malformed++
			return
		}
		v.marked += g.Bytes
	default:
		s := e.stream()
		if s == "" {
			v.malformed++
			return
		}
		if v.o.Stream != "" && s != v.o.Stream {
			return
		}
	}
	if !v.o.Since.IsZero() && e.Time.Before(v.o.Since) {
		return
	}
	if v.first == nil && e.Kind != kindGap {
		t := e.Time
		v.first = &t
	}
	if !v.collecting || v.o.Tail < 0 {
		v.emit(e)
		return
	}
	e.Payload = append([]byte(nil), e.Payload...)
	v.held = append(v.held, e)
	if e.full() {
		v.heldFull++
	}
	for v.heldFull > v.o.Tail {
		if v.held[0].full() {
			v.heldFull--
		}
		v.held = v.held[1:]
		v.cut = true
	}
}

// EndInitial ends the initial read: what Tail kept is printed, and a
// beginning that was rotated away is reported when the view reaches it.
func (v *View) EndInitial() {
	v.collecting = false
	for _, e := range v.held {
		v.emit(e)
	}
	v.held = nil
	if v.firstSeq > 0 && !v.cut && (v.o.Since.IsZero() || v.first == nil || !v.o.Since.After(*v.first)) {
		v.note("the output before what is printed was rotated away (the log keeps its newest files: tether start --log-max, --log-keep)")
	}
}

func (v *View) emit(e entry) {
	if e.Kind == kindGap {
		g, _ := parseGap(e)
		v.note("%d bytes (%d lines) of output were dropped here, from %s: %s", g.Bytes, g.Lines, g.At.Format(time.RFC3339Nano), g.Error)
		return
	}
	if !v.o.Timestamps && !v.o.JSON {
		v.write(e.Payload)
		if e.full() {
			v.write([]byte{'\n'})
		}
		return
	}
	s := 0
	if e.stream() == "err" {
		s = 1
	}
	if len(v.parts[s]) == 0 {
		v.partTime[s] = e.Time
	}
	v.parts[s] = append(v.parts[s], e.Payload...)
	if e.full() {
		v.line(s, false)
	}
}

// line prints stream s's assembled line.
func (v *View) line(s int, partial bool) {
	name := [2]string{"stdout", "stderr"}[s]
	b := v.parts[s]
	if v.o.JSON {
		rec := struct {
			Time       string `json:"time"`
			Stream     string `json:"stream"`
			Line       string `json:"line,omitempty"`
			LineBase64 string `json:"line_base64,omitempty"`
			Partial    bool   `json:"partial,omitempty"`
		}{Time: v.partTime[s].Format(tsLayout), Stream: name, Partial: partial}
		if utf8.Valid(b) {
			rec.Line = string(b)
		} else {
			rec.LineBase64 = base64.StdEncoding.EncodeToString(b)
		}
		out, _ := json.Marshal(rec)
		v.write(append(out, '\n'))
	} else {
		out := appendTime(nil, v.partTime[s])
		out = append(out, ' ')
		out = append(out, name[3:]...)
		out = append(out, ' ')
		out = append(append(out, b...), '\n')
		v.write(out)
	}
	v.parts[s] = v.parts[s][:0]
}

// CaughtUp prints the parts of lines still being written, in the line
// views: a prompt shows up while the command waits. Their rest follows as
// lines of their own.
func (v *View) CaughtUp() {
	for s := range v.parts {
		if len(v.parts[s]) > 0 {
			v.line(s, true)
		}
	}
}

// finish ends the view: lines left incomplete are printed as such, and
// output the record says was dropped beyond what the log marks is
// reported.
func (v *View) Finish(rec *registry.Record) error {
	v.CaughtUp()
	if v.malformed > 0 {
		v.note("%d malformed log entries skipped", v.malformed)
	}
	if rec != nil && rec.OutputLoss != nil && rec.OutputLoss.DroppedBytes > v.marked && v.firstSeq <= 0 {
		l := rec.OutputLoss
		v.note("%d bytes of output were dropped that the log does not mark (it could not be written since): first at %s: %s",
			l.DroppedBytes-v.marked, l.FirstAt.Format(time.RFC3339Nano), l.Error)
	}
	return v.err
}
