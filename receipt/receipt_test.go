package receipt

import (
	"bytes"
	"encoding/json"
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
