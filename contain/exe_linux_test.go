package contain

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// sum is the hex SHA-256 of the file at path.
func sum(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestReceiptExecutable (issue 25): the receipt names the main program's
// file by path, device, inode, size and SHA-256 — proven the file the
// process executed (via proc) for a binary, the script's own file (via
// path) for a script — and the running program's own file; on every
// mechanism.
func TestReceiptExecutable(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	b, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(prog, b, 0o755)
	script := filepath.Join(dir, "script")
	os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 1000\n"), 0o755)
	self, _ := os.Executable()
	for _, mech := range mechanisms(t) {
		t.Run(string(mech), func(t *testing.T) {
			for _, c := range []struct {
				argv []string
				via  string
			}{
				{[]string{prog, "1000"}, "proc"},
				{[]string{script}, "path"},
			} {
				cmd := Command(c.argv[0], c.argv[1:]...)
				cmd.Mechanism = mech
				if err := cmd.Start(); err != nil {
					t.Fatalf("Start(%s) = %v", c.argv[0], err)
				}
				// The proof is found in the background while the program
				// runs: it is stopped once that is done, so that a slow
				// machine (a loaded TCG guest took over 0.2 s) cannot
				// end it first.
				cmd.exe.wait()
				cmd.Kill()
				cmd.Wait()
				r := cmd.Receipt()
				e := r.Executable
				var st syscall.Stat_t
				syscall.Stat(c.argv[0], &st)
				if e == nil || e.Path != c.argv[0] || e.Via != c.via || e.Device != uint64(st.Dev) || e.Inode != st.Ino ||
					e.Size != st.Size || e.SHA256 != sum(t, c.argv[0]) || e.SHA256Skipped != "" {
					t.Errorf("executable = %+v, want %s via %s, dev %d inode %d size %d sha256 %s", e, c.argv[0], c.via, st.Dev, st.Ino, st.Size, sum(t, c.argv[0]))
				}
				if s := r.Tether.Executable; s == nil || s.Via != "self" || s.SHA256 != sum(t, self) {
					t.Errorf("tether.executable = %+v, want this test binary's sha256 %s", s, sum(t, self))
				}
			}
		})
	}
}

// TestExeHashCache: a big file's digest is kept in the state dir under its
// device and inode, used while the file is unchanged, and recomputed
// when its contents (ctime) change; a planted symlink is not followed.
func TestExeHashCache(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	p := filepath.Join(dir, "big")
	os.WriteFile(p, make([]byte, exeCacheMin+1), 0o755)
	id := func() string {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		return describeExe(f, p, "path", state).SHA256
	}
	want := sum(t, p)
	if got := id(); got != want {
		t.Fatalf("first digest %s, want %s", got, want)
	}
	ents, _ := os.ReadDir(filepath.Join(state, "hashes"))
	if len(ents) != 1 {
		t.Fatalf("hashes/ holds %d entries, want 1", len(ents))
	}
	entry := filepath.Join(state, "hashes", ents[0].Name())
	// A cached digest is used: plant a wrong one with the right stamp.
	b, _ := os.ReadFile(entry)
	fake := strings.Repeat("0", 64)
	os.WriteFile(entry, []byte(strings.TrimSpace(string(b))[:len(strings.TrimSpace(string(b)))-64]+fake+"\n"), 0o600)
	if got := id(); got != fake {
		t.Errorf("digest with a cached entry = %s, want the cached %s (the cache is not read)", got, fake)
	}
	// A change of the file's contents changes its ctime: recomputed.
	f, _ := os.OpenFile(p, os.O_WRONLY, 0)
	f.WriteAt([]byte{1}, 0)
	f.Close()
	if got, want := id(), sum(t, p); got != want {
		t.Errorf("digest after a write = %s, want %s (a stale cache entry was used)", got, want)
	}
	// A symlink in the entry's place is not followed.
	os.Remove(entry)
	os.Symlink("/etc/passwd", entry)
	if got, want := id(), sum(t, p); got != want {
		t.Errorf("digest with a symlink planted = %s, want %s", got, want)
	}
}
