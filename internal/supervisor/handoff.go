//go:build linux || windows || darwin

package supervisor

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tether-run/tether/internal/sessionctl"
	"github.com/tether-run/tether/internal/store"
)

// The hand-off from a client to the supervisor it started before it
// claimed the session's name, over the supervisor's stdin:
//
//	spec LEN\n<LEN bytes: spec.json's>   once the client made the spec
//	go\n                                 once the name is claimed and the record written
//
// so that the supervisor's exec and set-up (its state dir, token and
// signals, the spec, its scope, owner and log) overlap the client's
// claim: half a start's time is two Go processes starting. The pipe
// closed before the word ends the supervisor, which then removes what it
// made (its log) and touches nothing of the name's.

// goWord is the client's word to go on.
const goWord = "go\n"

// SendSpec writes the session's spec (spec.json's bytes) to the
// supervisor's stdin w.
func SendSpec(w io.Writer, spec []byte) error {
	_, err := io.WriteString(w, "spec "+strconv.Itoa(len(spec))+"\n"+string(spec))
	return err
}

// SendGo tells the supervisor on w that the name is claimed and its
// record written.
func SendGo(w io.Writer) error {
	_, err := io.WriteString(w, goWord)
	return err
}

// handoff reads what the client sends.
type handoff struct{ r *bufio.Reader }

// errNoGo is a hand-off that ended without the word.
var errNoGo = errors.New("the client closed the hand-off before its go")

// spec reads and checks the session's spec.
func (h *handoff) spec(name string) (*sessionctl.Spec, error) {
	line, err := h.r.ReadString('\n')
	if err != nil {
		return nil, errNoGo
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(line, "spec "), "\n"))
	if !strings.HasPrefix(line, "spec ") || err != nil || n < 0 || n > sessionctl.MaxSpec {
		return nil, fmt.Errorf("session %q: a hand-off of %q, not a spec", name, line)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(h.r, b); err != nil {
		return nil, errNoGo
	}
	spec, err := sessionctl.DecodeSpec(b, name)
	if err != nil {
		return nil, fmt.Errorf("session %q: bad spec: %w", name, err)
	}
	return spec, nil
}

// awaitGo reads the word; false when the pipe closed without it.
func (h *handoff) awaitGo() bool {
	// After a spec that could not be read, skip what is left of it.
	for {
		line, err := h.r.ReadString('\n')
		if err != nil {
			return false
		}
		if line == goWord {
			return true
		}
	}
}

// discard removes what a supervisor whose start was abandoned made: its
// log (its run id is the spec's, so no other run's).
func (s *supervisor) discard(reg *store.Registry) {
	if s.log == nil {
		return
	}
	s.endCapture()
	s.log.Close()
	s.log = nil
	for _, p := range store.LogFiles(reg.LogPath(s.name, s.spec.RunID)) {
		os.Remove(p)
	}
}
