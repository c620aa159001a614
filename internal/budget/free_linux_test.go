package budget

import (
	"errors"
	"testing"

	"github.com/tether-run/tether/limits"
)

func TestCheckFree(t *testing.T) {
	dir := t.TempDir()
	if err := CheckFree(dir, 1); err != nil {
		t.Errorf("CheckFree(%s, 1) = %v", dir, err)
	}
	err := CheckFree(dir, 1<<60)
	if !errors.Is(err, limits.ErrInsufficientSpace) {
		t.Fatalf("CheckFree(1E) error = %v, want limits.ErrInsufficientSpace", err)
	}
	if err := CheckFree(dir+"/missing", 1); err == nil || errors.Is(err, limits.ErrInsufficientSpace) {
		t.Errorf("CheckFree(missing) error = %v, want a statfs error", err)
	}
}
