//go:build linux || windows || darwin

package sessionctl

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/tether-run/tether/receipt"
)

// ProgressFile, in the session's runtime dir, receives each step of the
// supervisor's stop protocol as it is recorded, one JSON line each, so
// that a waiting `tether stop` can tell a person what is going on.
const ProgressFile = "progress.jsonl"

// OpenProgress creates the progress file, exclusively, before the
// session's command runs, and returns the supervisor's contain.Cmd.Progress
// writing to that held file: one append per step (a small O_APPEND write
// lands whole). The path is never opened again, so whatever a member puts
// in its place later (the runtime dir is its TETHER_SESSION_DIR: a FIFO,
// a symlink, nothing) can neither block nor redirect a step of the stop
// (issue 22). A step that cannot be written is only missing from the
// report; the receipt has it. close releases the file.
func OpenProgress(rt string) (progress func(receipt.Step), close func()) {
	f, err := CreateExclusive(filepath.Join(rt, ProgressFile))
	if err != nil {
		return nil, func() {}
	}
	return func(s receipt.Step) {
		if b, err := json.Marshal(s); err == nil {
			f.Write(append(b, '\n'))
		}
	}, func() { f.Close() }
}

// progressReader reads the steps appended to a progress file since its
// last call. It keeps the file open once it has seen it: the supervisor
// removes its runtime dir the moment its stop is confirmed, and the last
// steps are read from the open file after that.
type progressReader struct {
	path string
	f    *os.File
	off  int64
}

func (p *progressReader) next() []receipt.Step {
	if p.f == nil {
		f, err := OpenRegular(p.path) // never a FIFO a member planted
		if err != nil {
			return nil
		}
		p.f = f
	}
	b := make([]byte, 64<<10)
	n, _ := p.f.ReadAt(b, p.off)
	b = b[:n]
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil
	}
	p.off += int64(end + 1)
	var out []receipt.Step
	for _, line := range bytes.Split(b[:end], []byte{'\n'}) {
		var s receipt.Step
		if json.Unmarshal(line, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

func (p *progressReader) close() {
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}
