//go:build linux || windows || darwin

package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/tether-run/tether/receipt"
)

// progressFile, in the session's runtime dir, receives each step of the
// supervisor's stop protocol as it is recorded, one JSON line each, so
// that a waiting `tether stop` can tell a person what is going on.
const progressFile = "progress.jsonl"

// writeProgress returns the supervisor's contain.Cmd.Progress: one
// append per step (a small O_APPEND write lands whole). A step that cannot
// be written is only missing from the report; the receipt has it.
func writeProgress(rt string) func(receipt.Step) {
	path := filepath.Join(rt, progressFile)
	return func(s receipt.Step) {
		b, err := json.Marshal(s)
		if err != nil {
			return
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|noFollow, 0o600)
		if err != nil {
			return
		}
		f.Write(append(b, '\n'))
		f.Close()
	}
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
		f, err := os.OpenFile(p.path, os.O_RDONLY|noFollow, 0)
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
