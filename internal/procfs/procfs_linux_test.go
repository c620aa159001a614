package procfs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 1000)
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, big, 0o644)
	got, err := ReadFile(p)
	if err != nil || !bytes.Equal(got, big) {
		t.Errorf("ReadFile(10 KB file) = %d bytes, %v", len(got), err)
	}
	stat, err := ReadFile("/proc/self/stat")
	if err != nil || len(stat) == 0 {
		t.Errorf("ReadFile(/proc/self/stat) = %q, %v", stat, err)
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Errorf("ReadFile(missing) error = %v, want not exist", err)
	}
}
