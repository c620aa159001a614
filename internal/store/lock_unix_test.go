//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tether-run/tether/registry"
)

func TestLockExcludes(t *testing.T) {
	r, err := Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(filepath.Join(r.Dir, lockName))
	if err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Errorf("lock file: %v, mode %v; want a 0600 regular file", err, st.Mode())
	}
	got := make(chan struct{})
	go func() {
		u, err := r.Lock() // another open file description: flock excludes it
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a second Lock succeeded while the first was held")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	<-got
}

func TestLockRefusesUnsafeFile(t *testing.T) {
	for name, plant := range map[string]func(p string) error{
		"symlink":        func(p string) error { return os.Symlink("/tmp/elsewhere", p) },
		"group-writable": func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"directory":      func(p string) error { return os.Mkdir(p, 0o700) },
	} {
		t.Run(name, func(t *testing.T) {
			r, err := Open(filepath.Join(t.TempDir(), "state"))
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(r.Dir, lockName)
			if err := plant(p); err != nil {
				t.Fatal(err)
			}
			if name == "group-writable" {
				os.Chmod(p, 0o660)
			}
			if unlock, err := r.Lock(); !errors.Is(err, registry.ErrUnsafe) {
				if err == nil {
					unlock()
				}
				t.Errorf("Lock() with a %s lock file = %v, want registry.ErrUnsafe", name, err)
			}
		})
	}
}
