//go:build !linux

package budget

import "errors"

// CheckFree is not implemented on this system.
func CheckFree(path string, need int64) error { return errors.ErrUnsupported }
