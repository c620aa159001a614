//go:build windows || darwin

package session

import (
	"context"
	"os"
	"time"

	"github.com/tether-run/tether/internal/identity"
)

// followPoll is how often a follow looks at the log on Windows and macOS.
const followPoll = 100 * time.Millisecond

// followWatch polls on Windows and macOS: it looks at the log and the
// record every followPoll (there is no inotify; ReadDirectoryChangesW or
// kqueue's EVFILT_VNODE would do for a later round). A follow of an idle
// session wakes ten times a second.
type followWatch struct {
	done <-chan struct{} // the context's, once wakeOn is called
	file [3]uint64       // the file followed (fileID)
	has  bool
}

// watchFollow returns a polling watch; the directories are not watched.
func watchFollow(logDir string, recordDirs ...string) (*followWatch, error) {
	return &followWatch{}, nil
}

// watchFile notes f as the file followed and reports whether it is
// another file than before (a rotation): the caller then reads f once
// more.
func (fw *followWatch) watchFile(f *os.File) (bool, error) {
	id, err := fileID(f)
	if err != nil {
		return false, err
	}
	if fw.has && id == fw.file {
		return false, nil
	}
	fw.file, fw.has = id, true
	return true, nil
}

// wakeOn makes await return once ctx is done.
func (fw *followWatch) wakeOn(ctx context.Context) error {
	fw.done = ctx.Done()
	return nil
}

func (fw *followWatch) Close() error { return nil }

// await waits followPoll, or less when the supervisor exits or (without
// a supervisor to wait on) the context ends; the caller checks the
// context after it.
func (fw *followWatch) await(sup *identity.Handle) error {
	if sup != nil {
		sup.WaitExit(followPoll)
		return nil
	}
	select {
	case <-fw.done:
	case <-time.After(followPoll):
	}
	return nil
}
