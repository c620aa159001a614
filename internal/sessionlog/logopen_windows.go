package sessionlog

import (
	"os"

	"github.com/tether-run/tether/internal/store"
)

// openLogReader opens a file of a session's log for reading, checked as
// the registry checks records (store.OpenFile): not through a reparse
// point, a regular file of the user's that no one else may write.
func openLogReader(path string) (*os.File, error) { return store.OpenFile(path) }
