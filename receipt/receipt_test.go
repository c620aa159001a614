package receipt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestJSONHasNoNullLists(t *testing.T) {
	r := &Receipt{SchemaVersion: SchemaVersion, Main: &Process{}, Stragglers: []Process{{PID: 1}}}
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("null")) {
		t.Errorf("JSON() contains null:\n%s", b)
	}
	var back Receipt
	if err := json.Unmarshal(b, &back); err != nil || back.SchemaVersion != SchemaVersion {
		t.Errorf("round trip: %v, schema %d", err, back.SchemaVersion)
	}
	if bytes.Contains(b, []byte(`"empty_at"`)) {
		t.Errorf("zero empty_at should be omitted:\n%s", b)
	}
}

func TestNewRunID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewRunID()
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("NewRunID() = %q, want 32 lowercase hex digits", id)
		}
		if seen[id] {
			t.Fatalf("NewRunID() = %q twice in 1000 calls", id)
		}
		seen[id] = true
	}
}

// TestOriginKeys: the fields added in issue 11 are always present, empty
// or not, so that a reader can tell "not recorded" from an old receipt.
func TestOriginKeys(t *testing.T) {
	b, err := (&Receipt{SchemaVersion: SchemaVersion}).JSON()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"run_id": ""`, `"tether": {`, `"revision": ""`, `"modified": false`, `"host": {`, `"boot_id": ""`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON() of an empty receipt lacks %s:\n%s", key, b)
		}
	}
}
