package cli

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseDuration: any flag value is a non-negative duration or an
// error, never a panic or a wrapped negative (issue 15); a Go duration's
// own form parses back to itself.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10s", "1m30s", "250ms", "5", "0.5", ".5", "5.", "0", "-1", "-1s", "1e3", "0x10", "Inf", "NaN", "9223372036.854775807", "9223372036.854775808", "99999999999", "2562047h47m16.854775807s", "1h-1s", "", " 5", "5 ", "+5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("parseDuration(%q) = %v, want >= 0", s, d)
		}
		if back, err := parseDuration(d.String()); err != nil || back != d {
			t.Errorf("parseDuration(%q) = %v; parseDuration(%q) = %v, %v", s, d, d.String(), back, err)
		}
	})
}

// FuzzEnvFile: any file is a list of KEY=VALUE pairs the command will get
// exactly (a portable KEY, no NUL, no newline) or one error naming the
// file and line, never a panic.
func FuzzEnvFile(f *testing.F) {
	for _, s := range []string{
		"A=1\nB=2\n", "# comment\n\nexport PATH=/bin\n", `Q="quoted # kept"` + "\n", "S='x'\n", "E=\n", "BAD LINE\n",
		"1X=2\n", "A=\"unterminated\n", "A=1\r\nB=2\r\n", "A=\x00\n", "export  A=1\n", "=x\n", strings.Repeat("A", 70000) + "=1\n", "A=\"\n", "A='\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		kvs, err := parseEnvFile(bytes.NewReader(b), "fuzz.env")
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "--env-file fuzz.env") || strings.Contains(msg, "\n") {
				t.Errorf("parseEnvFile error %q: want one line naming fuzz.env", msg)
			}
			return
		}
		for _, kv := range kvs {
			if !envKeyRe.MatchString(kv) || strings.ContainsAny(kv, "\x00\n") {
				t.Errorf("parseEnvFile gave %q: want KEY=VALUE, KEY portable, no NUL or newline", kv)
			}
		}
		merged := mergeEnv([]string{"A=base", "PATH=/bin"}, kvs)
		seen := map[string]bool{}
		for _, kv := range merged {
			k, _, _ := strings.Cut(kv, "=")
			if seen[k] {
				t.Errorf("mergeEnv: %s twice in %q", k, merged)
			}
			seen[k] = true
		}
	})
}
