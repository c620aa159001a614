package randid

import (
	"regexp"
	"runtime"
	"testing"
)

// TestHex: 2n lowercase hex digits, and different each time (16 bytes
// repeating in 1,000 draws would mean the bytes are not random).
func TestHex(t *testing.T) {
	hexRE := regexp.MustCompile(`^[0-9a-f]*$`)
	seen := map[string]bool{}
	for i := range 1000 {
		s := Hex(16)
		if len(s) != 32 || !hexRE.MatchString(s) {
			t.Fatalf("Hex(16) = %q, want 32 lowercase hex digits", s)
		}
		if seen[s] {
			t.Fatalf("Hex(16) repeated %q after %d draws", s, i)
		}
		seen[s] = true
	}
	if s := Hex(0); s != "" {
		t.Errorf("Hex(0) = %q, want empty", s)
	}
	b := make([]byte, 300) // beyond one getrandom call's guaranteed size
	if !kernel(b) && runtime.GOOS == "linux" {
		t.Error("getrandom failed on Linux")
	}
}
