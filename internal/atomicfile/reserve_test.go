package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReserveRefuses: an existing name is refused, whatever is there, and
// nothing there is touched (a symlink is not followed, even dangling).
func TestReserveRefuses(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, p, victim string)
	}{
		{"file", func(t *testing.T, p, victim string) { os.WriteFile(p, []byte("theirs"), 0o600) }},
		{"symlink to a file", func(t *testing.T, p, victim string) { os.Symlink(victim, p) }},
		{"dangling symlink", func(t *testing.T, p, victim string) { os.Symlink(victim+".missing", p) }},
		{"directory", func(t *testing.T, p, victim string) { os.Mkdir(p, 0o700) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p, victim := filepath.Join(dir, "r.json"), filepath.Join(dir, "victim")
			os.WriteFile(victim, []byte("victim"), 0o600)
			tt.plant(t, p, victim)
			before, _ := os.Lstat(p)
			r, err := Reserve(p, 0o644)
			if !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Reserve(%s) = %v, %v; want an error satisfying fs.ErrExist", tt.name, r, err)
			}
			after, _ := os.Lstat(p)
			if !os.SameFile(before, after) || before.Mode() != after.Mode() || before.Size() != after.Size() {
				t.Errorf("Reserve changed what was at the name: %v → %v", before, after)
			}
			if b, _ := os.ReadFile(victim); string(b) != "victim" {
				t.Errorf("the symlink's target = %q, want untouched", b)
			}
			if b, _ := os.ReadFile(p); tt.name == "file" && string(b) != "theirs" {
				t.Errorf("the existing file = %q, want untouched", b)
			}
			if _, err := os.Stat(victim + ".missing"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a dangling symlink's target was created (%v)", err)
			}
		})
	}
}

func TestReserveCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	r, err := Reserve(p, 0o640)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(p); err != nil || st.Size() != 0 || !st.Mode().IsRegular() {
		t.Fatalf("placeholder = %v, %v; want an empty regular file", st, err)
	}
	if err := r.Commit([]byte("receipt")); err != nil {
		t.Fatalf("Commit() = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "receipt" {
		t.Errorf("after Commit: %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("dir has %d entries, want 1 (no temp file left)", len(ents))
	}
	if err := r.Commit([]byte("again")); err == nil {
		t.Error("a second Commit succeeded")
	}
}

// TestCommitAfterReplacement: a placeholder someone replaced is not
// overwritten; the data survives in a file the error names.
func TestCommitAfterReplacement(t *testing.T) {
	for _, how := range []string{"replaced by a file", "replaced by a symlink", "written into"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			p, victim := filepath.Join(dir, "r.json"), filepath.Join(dir, "victim")
			os.WriteFile(victim, []byte("victim"), 0o600)
			r, err := Reserve(p, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			switch how {
			case "replaced by a file":
				os.Remove(p)
				os.WriteFile(p, []byte("theirs"), 0o600)
			case "replaced by a symlink":
				os.Remove(p)
				os.Symlink(victim, p)
			case "written into":
				os.WriteFile(p, []byte("theirs"), 0o600)
			}
			err = r.Commit([]byte("receipt"))
			if !errors.Is(err, ErrReplaced) {
				t.Fatalf("Commit() = %v, want ErrReplaced", err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "victim" {
				t.Errorf("symlink target = %q, want untouched", b)
			}
			if how != "replaced by a symlink" {
				if b, _ := os.ReadFile(p); string(b) != "theirs" {
					t.Errorf("their file = %q, want untouched", b)
				}
			}
			kept := strings.Fields(err.Error())
			if b, _ := os.ReadFile(kept[len(kept)-1]); string(b) != "receipt" {
				t.Errorf("the data is not in the file the error names (%v): %q", err, b)
			}
		})
	}
	t.Run("removed", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "r.json")
		r, err := Reserve(p, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
		if err := r.Commit([]byte("receipt")); err != nil {
			t.Fatalf("Commit() = %v, want the free name taken", err)
		}
		if b, _ := os.ReadFile(p); string(b) != "receipt" {
			t.Errorf("after Commit: %q", b)
		}
	})
}

func TestCancel(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	r, err := Reserve(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Cancel(); err != nil {
		t.Fatalf("Cancel() = %v", err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("placeholder after Cancel: %v, want gone", err)
	}
	r, _ = Reserve(p, 0o644)
	os.Remove(p)
	os.WriteFile(p, []byte("theirs"), 0o600)
	r.Cancel()
	if b, _ := os.ReadFile(p); string(b) != "theirs" {
		t.Errorf("Cancel removed or changed a file that was not its placeholder: %q", b)
	}
}
