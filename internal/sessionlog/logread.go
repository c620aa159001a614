//go:build linux || windows || darwin

package sessionlog

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/tether-run/tether/internal/store"
)

// logFile reads one generation of a log, entry by entry, keeping an entry
// not yet complete (its LF not yet written) for the next read.
type logFile struct {
	f      *os.File
	seq    int
	legacy bool // written before the entry format: raw output bytes
	carry  []byte
	buf    []byte
}

// openLogFile opens path (openLogReader: never through a symlink, never
// waiting on a FIFO) and reads its generation from the header.
func openLogFile(path string) (*logFile, error) {
	f, err := openLogReader(path)
	if err != nil {
		return nil, err
	}
	lf := &logFile{f: f, seq: -1, buf: make([]byte, 64<<10)}
	var hdr [128]byte
	n, _ := f.ReadAt(hdr[:], 0)
	if i := bytes.IndexByte(hdr[:n], '\n'); i >= 0 {
		if e, err := parseEntry(hdr[:i]); err == nil {
			if seq, ok := parseHeader(e); ok {
				lf.seq = seq
			}
		}
	}
	// A file is created with its header, so one without is from before
	// the entry format (or not a log at all): shown as raw output.
	lf.legacy = lf.seq < 0 && n > 0
	return lf, nil
}

// read passes what was appended since the last read to v, up to EOF.
// final says the file is complete: an unterminated last line is passed
// as a partial.
func (lf *logFile) read(v *View, final bool) error {
	for {
		n, err := lf.f.Read(lf.buf)
		if n > 0 {
			lf.parse(v, lf.buf[:n])
		}
		if err == io.EOF || n == 0 && err == nil {
			break
		}
		if err != nil {
			return err
		}
	}
	if final && len(lf.carry) > 0 {
		if lf.legacy {
			v.add(entry{Kind: kindOutPart, Payload: lf.carry})
		} else {
			v.malformed++
		}
		lf.carry = lf.carry[:0]
	}
	return nil
}

func (lf *logFile) parse(v *View, b []byte) {
	if len(lf.carry) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lf.carry = append(lf.carry, b...)
			return
		}
		lf.carry = append(lf.carry, b[:i]...)
		lf.line(v, lf.carry)
		lf.carry = lf.carry[:0]
		b = b[i+1:]
	}
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lf.carry = append(lf.carry, b...)
			return
		}
		lf.line(v, b[:i])
		b = b[i+1:]
	}
}

func (lf *logFile) line(v *View, b []byte) {
	if lf.legacy {
		v.add(entry{Kind: kindOut, Payload: b})
		return
	}
	e, err := parseEntry(b)
	if err != nil {
		v.malformed++
		return
	}
	v.add(e)
}

func (lf *logFile) Close() error { return lf.f.Close() }

// openGenerations opens every file of the log at path and returns those
// with a generation newer than after, oldest first; at most one file per
// generation. A file being renamed while the scan runs moves to a higher
// index, which the scan (newest first) reaches later: it may be opened
// twice, never missed.
func openGenerations(path string, after int) ([]*logFile, error) {
	var out []*logFile
	seen := map[int]bool{}
	for _, p := range store.LogFiles(path) {
		lf, err := openLogFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		if !lf.legacy && (lf.seq <= after || seen[lf.seq]) {
			lf.Close()
			continue
		}
		seen[lf.seq] = true
		out = append(out, lf)
	}
	// Oldest first: by generation, and legacy files (all -1) by index.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out, nil
}

// Tail reads a log from its oldest file on, and follows it by name
// across rotations.
type Tail struct {
	path string
	v    *View
	cur  *logFile // the newest file read: the one being written, unless it rotated since
}

// OpenTail reads every file of the log at path into v; the newest
// stays open for drain.
func OpenTail(path string, v *View) (*Tail, error) {
	gens, err := openGenerations(path, -1)
	if err != nil {
		return nil, err
	}
	if len(gens) == 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	t := &Tail{path: path, v: v}
	v.firstSeq = gens[0].seq
	if err := t.take(gens); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// take reads gens in order; the last one becomes the file followed.
func (t *Tail) take(gens []*logFile) error {
	var err error
	for i, lf := range gens {
		if t.cur != nil {
			if lf.seq > t.cur.seq+1 && t.cur.seq >= 0 {
				t.v.note("%d log files were rotated away before they could be read: output is missing here", lf.seq-t.cur.seq-1)
			}
			t.cur.Close()
		}
		t.cur = lf
		if err == nil {
			err = lf.read(t.v, i < len(gens)-1)
		}
	}
	return err
}

// drain passes what was appended to the log to the view, moving on to
// newer files while the one followed has rotated away. The writer closes
// a file before it renames it, so a rotated file is complete once read
// to its end.
func (t *Tail) Drain() error {
	for {
		if err := t.cur.read(t.v, false); err != nil {
			return err
		}
		now, err := os.Stat(t.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // between a rotation and the new file: its creation wakes the follower
		}
		if err != nil {
			return err
		}
		held, err := t.cur.f.Stat()
		if err != nil {
			return err
		}
		if os.SameFile(now, held) {
			return nil
		}
		if err := t.cur.read(t.v, true); err != nil {
			return err
		}
		gens, err := t.newer()
		if err != nil {
			return err
		}
		if len(gens) == 0 {
			return nil
		}
		if err := t.take(gens); err != nil {
			return err
		}
	}
}

// newer opens the files newer than the one followed. A rotation renames
// the files one by one while they are listed and opened, so a generation
// can be missed between two names: a gap — after the file followed, or
// between two of the files listed (CI saw one there: S+1, then S+3) — is
// listed again, for up to rotationSettle, before take reports it as
// rotated away. The bound is time, not tries: a writer descheduled in
// the middle of its renames on a loaded machine took longer than five
// tries 1 ms apart, and the follow reported a gap that was not there.
func (t *Tail) newer() ([]*logFile, error) {
	deadline := time.Now().Add(rotationSettle)
	for {
		gens, err := openGenerations(t.path, t.cur.seq)
		if err != nil || len(gens) == 0 || t.cur.seq < 0 || contiguous(t.cur.seq, gens) || !time.Now().Before(deadline) {
			return gens, err
		}
		for _, g := range gens {
			g.Close()
		}
		time.Sleep(time.Millisecond)
	}
}

// contiguous reports whether gens follow generation after one by one.
func contiguous(after int, gens []*logFile) bool {
	for _, g := range gens {
		if g.seq != after+1 {
			return false
		}
		after = g.seq
	}
	return true
}

// rotationSettle bounds how long newer waits for a rotation's renames to
// end before it believes a gap; only a gap that is real waits it out.
const rotationSettle = 250 * time.Millisecond

func (t *Tail) Close() error {
	if t.cur != nil {
		return t.cur.Close()
	}
	return nil
}
