package sessionlog

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUnwritten: a log as Open made it holds no output; one entry more, a
// rotated generation, a file that is not a log, a symlink to an unwritten
// log and a missing file do not count as unwritten.
func TestUnwritten(t *testing.T) {
	dir := t.TempDir()
	open := func(name string) (*Log, string) {
		p := filepath.Join(dir, name)
		l, err := Open(p, MinMax, 2, "r1")
		if err != nil {
			t.Fatal(err)
		}
		return l, p
	}
	fresh, freshPath := open("fresh.log")
	fresh.Close()
	written, writtenPath := open("written.log")
	written.write(appendEntry(nil, appendTime(nil, time.Now()), kindOut, []byte("hello")))
	written.Close()
	rotated, rotatedPath := open("rotated.log")
	rotated.Close()
	if err := os.WriteFile(rotatedPath+".1", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.log")
	if err := os.WriteFile(other, []byte("not a log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.log")
	if err := os.Symlink(freshPath, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want bool
	}{
		{freshPath, true},
		{writtenPath, false},
		{rotatedPath, false},
		{other, false},
		{link, false},
		{filepath.Join(dir, "missing.log"), false},
	} {
		if got := Unwritten(c.path); got != c.want {
			t.Errorf("Unwritten(%s) = %t, want %t", filepath.Base(c.path), got, c.want)
		}
	}
}
