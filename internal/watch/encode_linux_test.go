package watch

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEncode: the hand-written line decodes, with encoding/json, to the
// message it was made from, whatever bytes its strings hold.
func TestEncode(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "new\nline\ttab\x00nul\x1f\x7f", "ütf-8 ✓", "/run/user/1000/tether"} {
		for _, m := range []message{
			{V: version, Op: "done", ID: 7},
			{V: version, Op: "add", ID: 1<<64 - 1, Group: &Group{Registry: s, Name: s, Receipt: s, Reason: s, GraceMS: 500}},
		} {
			line := encode(m)
			if line[len(line)-1] != '\n' {
				t.Fatalf("encode(%+v) = %q, want one line", m, line)
			}
			var got message
			if err := json.Unmarshal(line, &got); err != nil {
				t.Fatalf("encode(%+v) = %q: %v", m, line, err)
			}
			if !reflect.DeepEqual(got, m) {
				t.Errorf("encode(%+v) decodes to %+v", m, got)
			}
		}
	}
}
