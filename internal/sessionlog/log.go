package sessionlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/tether-run/tether/internal/store"
	"github.com/tether-run/tether/receipt"
)

// Log bounds. A session's log is at most DefaultKeep files of
// DefaultMax bytes: NAME.log being written, NAME.log.1 the one before,
// up to NAME.log.(keep-1). 32 MiB in all by default: hours of a chatty dev
// server, and still small beside what the session itself uses.
const (
	DefaultMax  = 8 << 20
	DefaultKeep = 4
	// MinMax keeps a file larger than a few whole entries, so rotation
	// always makes progress.
	MinMax = 64 << 10
)

// Log writes encoded entries to a session's log, rotating by size
// through keep generations.
//
// Its write never fails: a write the file refuses (ENOSPC, EROFS, EIO) is
// dropped and counted instead. The session's output is read from pipes,
// and a failed write must not end the reading, or the session's own
// processes would block, or die of SIGPIPE once the read ends closed: a
// full state disk must not disturb the workload. Where output was dropped
// a gap entry is written once the file takes writes again, so a reader
// sees where and how much.
//
// The file always holds whole entries: a short write is truncated back,
// and each new generation is created with its header under a temporary
// name and renamed into place, so a reader never sees a file without one.
type Log struct {
	mu    sync.Mutex
	path  string
	max   int64
	keep  int
	runID string // in every file's header

	f      *os.File // nil after a rotation or a failed create: made at the next write
	n      int64    // bytes in f
	hdr    int64    // bytes of f's header
	h      hash.Hash
	full   bool // the last file is full: shift the generations before creating
	next   int  // seq of the next generation
	shifts int  // rotations done: a generation's index is shifts minus its own
	gens   []generation

	loss receipt.OutputLoss
	// Dropped since the last gap entry was written.
	gapBytes, gapLines int64
	gapFirst           time.Time
	gapErr             string
	// lost is signalled (never blocking) each time output is dropped.
	lost chan struct{}
}

// generation is one file of the log, for the receipt.
type generation struct {
	seq    int
	shifts int // l.shifts when it was created
	size   int64
	sum    string // set once closed
}

func Open(path string, max int64, keep int, runID string) (*Log, error) {
	if max <= 0 {
		max = DefaultMax
	}
	if keep <= 0 {
		keep = DefaultKeep
	}
	max = maxInt64(max, MinMax)
	// Each run has a log of its own (store.LogPath); files at path can
	// only be a run id's used again (an embedder's): they go, so none is
	// mistaken for a generation of this one.
	for _, p := range store.LogFiles(path) {
		if p != path {
			os.Remove(p)
		}
	}
	l := &Log{path: path, max: max, keep: keep, runID: runID, lost: make(chan struct{}, 1)}
	if err := l.create(); err != nil {
		return nil, err
	}
	return l, nil
}

// genPath is where the generation index places back lives.
func (l *Log) genPath(index int) string {
	if index == 0 {
		return l.path
	}
	return l.path + "." + strconv.Itoa(index)
}

// create makes the next generation: header written under a temporary
// name, then renamed to the log's path.
func (l *Log) create() error {
	tmp := l.path + ".new"
	os.Remove(tmp)
	f, err := createLog(tmp)
	if err != nil {
		return err
	}
	hdr := headerEntry(time.Now(), l.next, l.runID)
	if _, err = f.Write(hdr); err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	l.f, l.n, l.hdr, l.h = f, int64(len(hdr)), int64(len(hdr)), sha256.New()
	l.h.Write(hdr)
	l.gens = append(l.gens, generation{seq: l.next, shifts: l.shifts, size: l.n})
	l.next++
	return nil
}

// rotate closes the current file: the next write shifts the generations
// (NAME.log → NAME.log.1 → … ; the oldest is overwritten) and creates a
// new one. The writer closes a file before renaming it, so a reader that
// holds it knows it is complete.
func (l *Log) rotate() {
	l.closeFile()
	l.full = true
}

func (l *Log) closeFile() {
	if l.f == nil {
		return
	}
	l.f.Close()
	g := &l.gens[len(l.gens)-1]
	g.size, g.sum = l.n, hex.EncodeToString(l.h.Sum(nil))
	l.f = nil
}

// shift renames each generation one place older. Failures are ignored:
// a file that could not move is overwritten or left, and the receipt's
// paths say where each should be.
func (l *Log) shift() {
	for i := l.keep - 1; i >= 1; i-- {
		os.Rename(l.genPath(i-1), l.genPath(i))
	}
	if l.keep == 1 {
		os.Remove(l.path)
	}
	l.shifts++
	l.full = false
}

// write appends the encoded entries b, rotating where a file would grow
// past max (between entries), and drops and counts what the file refuses.
func (l *Log) write(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(b) > 0 {
		chunk := b
		if l.f != nil && l.n+int64(len(chunk)) > l.max {
			i := -1
			if room := l.max - l.n; room > 0 {
				i = bytes.LastIndexByte(chunk[:room], '\n')
			}
			switch {
			case i >= 0:
				chunk = chunk[:i+1]
			case l.n > l.hdr:
				// Not even one entry fits: rotate first. (A file
				// with its header alone takes the entry whatever its
				// size: max is larger than an entry.)
				l.rotate()
				continue
			}
		}
		l.put(chunk)
		b = b[len(chunk):]
	}
}

// put writes whole entries b to the current file, creating it first if
// needed, preceded by the gap entry of what was dropped before.
func (l *Log) put(b []byte) {
	if l.f == nil {
		if l.full {
			l.shift()
		}
		if err := l.create(); err != nil {
			l.drop(b, err)
			return
		}
	}
	buf := b
	if l.gapFirst != (time.Time{}) {
		buf = append(gapEntry(l.gapFirst, l.gapBytes, l.gapLines, l.gapErr), b...)
	}
	n, err := l.f.Write(buf)
	if err != nil {
		if n > 0 {
			if terr := l.f.Truncate(l.n); terr != nil {
				// A torn entry stays in the file: counted in its digest,
				// and no more is written after it.
				l.h.Write(buf[:n])
				l.n += int64(n)
				l.rotate()
			}
		}
		l.drop(b, err)
		return
	}
	l.h.Write(buf)
	l.n += int64(n)
	l.gapFirst, l.gapBytes, l.gapLines, l.gapErr = time.Time{}, 0, 0, ""
}

// drop counts the output entries b carry as lost to err.
func (l *Log) drop(b []byte, err error) {
	n, lines := entryStats(b)
	if n == 0 {
		return
	}
	now := time.Now().UTC()
	msg := errors.Unwrap(err)
	if msg == nil {
		msg = err
	}
	if l.loss.Error == "" {
		l.loss.FirstAt = now
		l.loss.Error = err.Error()
	} else if s := err.Error(); s != l.loss.Error {
		l.loss.LastError = s
	}
	l.loss.DroppedBytes += n
	l.loss.DroppedLines += lines
	if l.gapFirst == (time.Time{}) {
		l.gapFirst, l.gapErr = now, msg.Error()
	}
	l.gapBytes += n
	l.gapLines += lines
	select {
	case l.lost <- struct{}{}:
	default:
	}
}

// Loss returns what was dropped so far, or nil if nothing was.
func (l *Log) Loss() *receipt.OutputLoss {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loss.Error == "" {
		return nil
	}
	loss := l.loss
	return &loss
}

// Files lists the generations written, oldest first, for the receipt: at
// most receipt.MaxListed, the newest; omitted counts the older ones
// (all rotated away) and their bytes.
func (l *Log) Files() (files []receipt.LogFile, omitted int, omittedBytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	files = []receipt.LogFile{}
	for i, g := range l.gens {
		if g.sum == "" && l.f != nil && i == len(l.gens)-1 {
			g.size, g.sum = l.n, hex.EncodeToString(l.h.Sum(nil))
		}
		if len(l.gens)-i > receipt.MaxListed {
			omitted++
			omittedBytes += g.size
			continue
		}
		index := l.shifts - g.shifts
		f := receipt.LogFile{Seq: g.seq, Size: g.size, SHA256: g.sum, Path: l.genPath(index)}
		if index >= l.keep {
			f.Path, f.Removed = "", true
		}
		files = append(files, f)
	}
	return files, omitted, omittedBytes
}

// Close writes the gap entry of a drop that nothing followed, if the file
// takes it now, and closes the file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	if l.gapFirst != (time.Time{}) {
		g := gapEntry(l.gapFirst, l.gapBytes, l.gapLines, l.gapErr)
		if n, err := l.f.Write(g); err == nil {
			l.h.Write(g)
			l.n += int64(n)
		} else if n > 0 {
			l.f.Truncate(l.n)
		}
	}
	l.closeFile()
	return nil
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
