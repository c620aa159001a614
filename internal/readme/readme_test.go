package readme

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root, where README.md is.
const root = "../.."

// Bounds of README (issue 27): the reference lives in docs/.
const (
	maxReadmeLines = 250 // README.md has fewer lines than this
	maxCell        = 300 // characters in one table cell of README.md
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestReadmeShape fails when README.md grows to 250 lines or more, or
// holds a table cell over 300 characters: what is longer belongs in docs/.
func TestReadmeShape(t *testing.T) {
	for _, p := range shapeProblems("README.md", readFile(t, filepath.Join(root, "README.md"))) {
		t.Error(p)
	}
}

// shapeProblems says what in text breaks README's bounds.
func shapeProblems(name, text string) []string {
	var out []string
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) >= maxReadmeLines {
		out = append(out, fmt.Sprintf("%s has %d lines, want fewer than %d: move reference material to docs/", name, len(lines), maxReadmeLines))
	}
	for i, l := range lines {
		if !strings.HasPrefix(strings.TrimSpace(l), "|") {
			continue
		}
		for j, cell := range splitRow(l) {
			if n := len([]rune(cell)); n > maxCell {
				out = append(out, fmt.Sprintf("%s:%d: table cell %d has %d characters, want at most %d: %.60q...", name, i+1, j+1, n, maxCell, cell))
			}
		}
	}
	return out
}

// splitRow splits a markdown table row into its cells; an escaped pipe
// (\|) does not split.
func splitRow(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case row[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(row[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// TestReadmeShapeCatches shows the check refusing a README that is too
// long or has a table cell that is, and passing a short one.
func TestReadmeShapeCatches(t *testing.T) {
	for name, text := range map[string]string{
		"long":  strings.Repeat("line\n", maxReadmeLines),
		"table": "| a | b |\n|---|---|\n| x | " + strings.Repeat("y", maxCell+1) + " |\n",
	} {
		if len(shapeProblems(name, text)) == 0 {
			t.Errorf("%s: the shape check passed a README it must refuse", name)
		}
	}
	if p := shapeProblems("short", "# x\n\n| a | b |\n|---|---|\n| x | y \\| z |\n"); len(p) > 0 {
		t.Errorf("the shape check refused a short README: %v", p)
	}
}

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^#{1,6} +(.*?) *#*$`)
)

// anchors returns the GitHub anchors of the headings of a markdown text,
// outside code fences.
func anchors(text string) map[string]bool {
	a := map[string]bool{}
	fence := false
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		m := headingRE.FindStringSubmatch(l)
		if fence || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		a[b.String()] = true
	}
	return a
}

// TestDocLinks checks every relative link of README.md and docs/*.md: the
// file it names exists, and a #fragment is a heading of that file. A
// section moved or renamed breaks no link silently.
func TestDocLinks(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files := append([]string{filepath.Join(root, "README.md")}, docs...)
	if len(docs) < 8 {
		t.Fatalf("docs/ has %d files, want the reference (cli, receipts, hosts, library, ...)", len(docs))
	}
	for _, f := range files {
		text := readFile(t, f)
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if err := checkLink(f, target); err != nil {
				t.Errorf("%s: link %s: %v", f, target, err)
			}
		}
	}
}

func checkLink(from, target string) error {
	path, frag, _ := strings.Cut(target, "#")
	file := from
	if path != "" {
		file = filepath.Join(filepath.Dir(from), path)
		if _, err := os.Stat(file); err != nil {
			return err
		}
	}
	if frag == "" {
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if !anchors(string(b))[frag] {
		return fmt.Errorf("%s has no heading with anchor #%s", file, frag)
	}
	return nil
}
