package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tether-run/tether/internal/testuser"
)

func TestReadEnvFile(t *testing.T) {
	p := filepath.Join(testuser.TempDir(t), "app.env")
	os.WriteFile(p, []byte(`# a comment

  # an indented comment
A=1
export B=two words
C="quoted value"
D='single'
E="unmatched'
F=
G=a=b # kept as written
_H9="x"y"
`), 0o600)
	got, err := readEnvFile(p)
	want := []string{"A=1", "B=two words", "C=quoted value", "D=single", `E="unmatched'`, "F=", "G=a=b # kept as written", `_H9=x"y`}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("readEnvFile = %q, %v, want %q, nil", got, err, want)
	}
}

func TestReadEnvFileBad(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no equals", "A=1\nB\n", ":2: want KEY=VALUE"},
		{"bad key", "\n\n1A=x\n", ":3: want KEY=VALUE"},
		{"space before equals", "A =1\n", ":1: want KEY=VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(testuser.TempDir(t), "bad.env")
			os.WriteFile(p, []byte(tc.text), 0o600)
			_, err := readEnvFile(p)
			if err == nil || !strings.Contains(err.Error(), "--env-file "+p+tc.want) {
				t.Errorf("readEnvFile(%q) = %v, want an error with %q", tc.text, err, p+tc.want)
			}
		})
	}
	if _, err := readEnvFile("/nonexistent/x.env"); err == nil || !strings.Contains(err.Error(), "/nonexistent/x.env") {
		t.Errorf("readEnvFile(missing) = %v, want an error naming the file", err)
	}
}

func TestEnviron(t *testing.T) {
	p := filepath.Join(testuser.TempDir(t), "f.env")
	os.WriteFile(p, []byte("A=file\nB=file\n"), 0o600)
	f := commandFlags{envFiles: []string{p}, env: []string{"B=flag", "C=flag"}}
	got, set, err := f.environ([]string{"PATH=/bin", "A=base", "Z=base"})
	want := []string{"PATH=/bin", "A=file", "Z=base", "B=flag", "C=flag"}
	wantSet := []string{"A=file", "B=file", "B=flag", "C=flag"}
	if err != nil || !slices.Equal(got, want) || !slices.Equal(set, wantSet) {
		t.Errorf("environ = %q, %q, %v, want %q, %q, nil", got, set, err, want, wantSet)
	}
	if got, set, err := (&commandFlags{}).environ([]string{"A=1"}); got != nil || set != nil || err != nil {
		t.Errorf("environ without flags = %q, %q, %v, want nil, nil, nil (the caller's environment)", got, set, err)
	}
	if _, _, err := (&commandFlags{env: []string{"NOVALUE"}}).environ(nil); err == nil || !strings.Contains(err.Error(), "--env") {
		t.Errorf("environ(--env NOVALUE) = %v, want an error naming --env", err)
	}
}
