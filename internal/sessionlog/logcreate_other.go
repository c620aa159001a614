//go:build !windows

package sessionlog

import "os"

// createLog creates the new log file p, 0600, for appending; p must not
// exist.
func createLog(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
}
