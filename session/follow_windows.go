package session

import (
	"context"
	"os"
	"time"

	"github.com/tether-run/tether/identity"
	"golang.org/x/sys/windows"
)

// followPoll is how often a follow looks at the log on Windows.
const followPoll = 100 * time.Millisecond

// followWatch polls on Windows: it looks at the log and the record every
// followPoll (there is no inotify; ReadDirectoryChangesW would do for a
// later round). A follow of an idle session wakes ten times a second.
type followWatch struct {
	done <-chan struct{} // the context's, once wakeOn is called
	file [3]uint32       // volume serial and file index of the file followed
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
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return false, &os.PathError{Op: "GetFileInformationByHandle", Path: f.Name(), Err: err}
	}
	id := [3]uint32{info.VolumeSerialNumber, info.FileIndexHigh, info.FileIndexLow}
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
