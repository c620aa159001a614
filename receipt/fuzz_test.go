package receipt

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReceipt: any bytes that decode as a receipt (what tether stop,
// wait and status read back from receipts/) encode again without a null
// list and decode to the same encoding: a receipt read is a receipt that
// can be shown and kept (issue 15).
func FuzzReceipt(f *testing.F) {
	r := &Receipt{SchemaVersion: 1, RunID: "0123456789abcdef0123456789abcdef", Argv: []string{"sleep", "1"}, Main: &Process{PID: 7}, Stragglers: []Process{{PID: 8}}}
	good, _ := r.JSON()
	f.Add(good)
	for _, s := range []string{`{}`, `null`, `{"argv":null,"stragglers":[{"argv":null}],"limits":{"applied":null,"outcome":{}}}`, `{"main":null,"stop":{"steps":null}}`, `[]`, `{"duration_ms":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Receipt
		if json.Unmarshal(b, &r) != nil {
			return
		}
		out, err := r.JSON()
		if err != nil {
			t.Fatalf("JSON() of a decoded receipt: %v (from %q)", err, b)
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("JSON() wrote invalid JSON %q", out)
		}
		if p := nullList(v, ""); p != "" {
			t.Errorf("JSON() from %q has a null list at %s", b, p)
		}
		var again Receipt
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatal(err)
		}
		if out2, _ := again.JSON(); !bytes.Equal(out, out2) {
			t.Errorf("receipt does not round-trip:\n%s\n%s", out, out2)
		}
	})
}

// nullList returns the path of a null among the known list fields of a
// decoded receipt, or "".
func nullList(v any, path string) string {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "argv", "caveats", "signals_received", "steps", "stragglers", "unconfirmed", "applied", "not_applied", "sources":
				if e == nil {
					return path + "." + k
				}
			}
			if p := nullList(e, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for _, e := range x {
			if p := nullList(e, path+"[]"); p != "" {
				return p
			}
		}
	}
	return ""
}
