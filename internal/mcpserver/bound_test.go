package mcpserver

import (
	"regexp"
	"strings"
	"testing"
)

// TestTail: the writer keeps the last max bytes, however they arrive,
// and says how many it dropped.
func TestTail(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		want   string
		drop   int64
	}{
		{"under", []string{"ab", "cd"}, "abcd", 0},
		{"exactly", []string{"abcde"}, "abcde", 0},
		{"one write over", []string{"abcdefg"}, "cdefg", 2},
		{"many writes over", []string{"abc", "def", "gh"}, "defgh", 3},
		{"a large write after a small", []string{"xy", "0123456789"}, "56789", 7},
	} {
		tl := newTail(5)
		for _, w := range c.writes {
			if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("%s: Write = %d, %v", c.name, n, err)
			}
		}
		got, drop := tl.text()
		if drop != c.drop || !strings.HasSuffix(got, c.want) || (drop > 0) != strings.HasPrefix(got, "[") {
			t.Errorf("%s: text %q, dropped %d; want %q, %d (and the drop said)", c.name, got, drop, c.want, c.drop)
		}
	}
}

// TestGrepWriter: whole lines that match pass, across writes that split
// them; a last line without its newline is matched at flush.
func TestGrepWriter(t *testing.T) {
	var b strings.Builder
	g := &grepWriter{re: regexp.MustCompile("^err.* [24]$"), w: &b}
	for _, w := range []string{"ok 1\nerr", "or 2\nok 3\n", "error 4"} {
		g.Write([]byte(w))
	}
	g.flush()
	if b.String() != "error 2\nerror 4" {
		t.Errorf("grep = %q", b.String())
	}
}
