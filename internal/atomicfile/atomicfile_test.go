package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.json")
	for _, content := range []string{"first", "second, longer"} {
		if err := WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatalf("WriteFile(%q) error = %v", content, err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Errorf("after WriteFile(%q): read %q, %v", content, got, err)
		}
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("dir has %d entries, want 1 (no temp files left)", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "missing", "r.json"), nil, 0o644); err == nil {
		t.Error("WriteFile into a missing dir succeeded")
	}
}

func TestReplace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r")
	if err := Replace(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "x" {
		t.Errorf("Replace wrote %q", b)
	}
}
