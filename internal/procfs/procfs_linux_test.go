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

// TestReadRecord: a stat file is read whole, as ReadFile reads it, and a
// file larger than one read still is.
func TestReadRecord(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789"), 1000)
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, big, 0o644)
	if got, err := ReadRecord(p); err != nil || !bytes.Equal(got, big) {
		t.Errorf("ReadRecord(10 KB file) = %d bytes, %v", len(got), err)
	}
	a, err1 := ReadRecord("/proc/1/stat")
	b, err2 := ReadFile("/proc/1/stat")
	if err1 != nil || err2 != nil || len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("ReadRecord(/proc/1/stat) = %q, %v; ReadFile = %q, %v", a, err1, b, err2)
	}
	if _, err := ReadRecord(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Errorf("ReadRecord(missing) error = %v, want not exist", err)
	}
}
