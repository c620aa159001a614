package identity

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzIdentity feeds any bytes to ParseStat (/proc/PID/stat, whose comm
// may hold spaces, parentheses and newlines) and to Parse (the tokens a
// record carries, which reap acts on): never a panic; a stat parses to a
// positive pid, and a token to one that prints back to itself.
func FuzzIdentity(f *testing.F) {
	for _, s := range []string{
		"4242 (sleep) S 1 4242 4242 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 12345 1000 100 18446744073709551615\n",
		"7 (a) b) c) R 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0\n",
		"1 (x\ny) Z 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0\n",
		"(nopid) S 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 0 0\n", "-5 (neg) S", "1 () ", ")(",
		"linux:0b8e6c6a-1f3e-4e3a-9d6d-8d1c5a1e2f3a:4242:12345:678", "linux:boot:1:2", "linux:boot:0:2", "linux:boot:1:2:0", ":::", "linux:boot:1:-2",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if st, err := ParseStat(b); err == nil && st.PID < 1 {
			t.Errorf("ParseStat(%q) = pid %d", b, st.PID)
		}
		tok, err := Parse(string(b))
		if err != nil {
			return
		}
		if tok.PID <= 0 || tok.OS == "" || tok.BootID == "" {
			t.Errorf("Parse(%q) = %+v", b, tok)
		}
		back, err := Parse(tok.String())
		if err != nil || back != tok {
			t.Errorf("Parse(%q) = %+v; Parse(%q) = %+v, %v", b, tok, tok.String(), back, err)
		}
		if strings.Count(tok.String(), ":") > 4 || strconv.Itoa(tok.PID) == "" {
			t.Errorf("token %q", tok.String())
		}
	})
}
