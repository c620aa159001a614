package cli_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestRunReceiptGolden compares the receipt of a deterministic run, with
// what varies between runs replaced by placeholders, to a golden file per
// mechanism. Run with -update to rewrite them after an intended change.
func TestRunReceiptGolden(t *testing.T) {
	forMechanisms(t, func(t *testing.T, mech string) {
		rcpt := filepath.Join(t.TempDir(), "receipt.json")
		args := append([]string{"run", "--mechanism", mech, "--grace", "5s", "--receipt", rcpt, "--"}, sh("setsid sleep 1000 & exit 0")...)
		code, _, stderr := tether(t, args...)
		if code != 0 {
			t.Fatalf("tether %s = exit %d, want 0; stderr:\n%s", strings.Join(args, " "), code, stderr)
		}
		r, raw := readReceipt(t, rcpt)
		checkStopped(t, r, mech)
		checkOrigin(t, r)
		if r.Cgroup != nil && !slices.Contains([]string{"pidfd-cgroup-id", "proc-cgroup"}, r.Cgroup.Verified) {
			t.Errorf("tether run: receipt cgroup.placement_verified_by = %q, want pidfd-cgroup-id or proc-cgroup", r.Cgroup.Verified)
		}

		tree, err := parseOrdered(raw)
		if err != nil {
			t.Fatalf("receipt: %v", err)
		}
		var replace []string
		if r.Cgroup != nil {
			// The leaf lies under the parent: replace it first.
			replace = []string{r.Cgroup.Path, "<leaf>", r.Cgroup.Parent, "<parent>"}
		}
		normalize(tree, "", strings.NewReplacer(replace...))
		// A straggler's argv is read when tether finds it, which may be
		// before the forked shell exec'd setsid, or before setsid exec'd
		// sleep: three forms of one process.
		for _, s := range tree.get("stragglers").elems {
			if a := s.get("argv"); a != nil {
				a.elems = []*node{{scalar: "<sh, setsid or sleep argv>"}}
			}
		}
		var got bytes.Buffer
		tree.write(&got, "")
		got.WriteByte('\n')

		golden := filepath.Join("testdata", "receipt-"+mech+".golden.json")
		if *update {
			if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -run TestRunReceiptGolden -update to create it)", err)
		}
		if p := nullPaths(t, want); len(p) != 0 {
			t.Errorf("%s has null at %v, want no null", golden, p)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("tether run receipt (normalized) differs from %s (if intended, rerun with -update):\n%s\nreceipt as written:\n%s", golden, lineDiff(got.String(), string(want)), raw)
		}
	})
}

// placeholders maps keys whose values differ between runs to what
// replaces them. Keys not listed keep their values: structure, booleans,
// counts, step names, reasons, the mechanism.
var placeholders = map[string]string{
	"at":                    "<time>",
	"cwd":                   "<cwd>",
	"path":                  "<leaf>",
	"parent":                "<parent>",
	"id":                    "<cgroup-id>",
	"pid":                   "<pid>",
	"token":                 "<token>",
	"unconfirmed":           "<token>",
	"placement_verified_by": "<placement>",  // pidfd-cgroup-id on Linux 6.13+, else proc-cgroup
	"delegation":            "<delegation>", // no-manager here; own-scope or systemd-xattr under systemd
	"run_id":                "<run-id>",
	"boot_id":               "<boot-id>",
	"hostname":              "<hostname>",
	"kernel":                "<kernel>",
	// The build: a go test binary records no commit, a go build in a
	// checkout does (checkOrigin compares them with the build info).
	"version":  "<version>",
	"revision": "<revision>",
	"modified": "<modified>",
	// Program files (executable, tether.executable): TestReceiptExecutable
	// in contain checks their values.
	"device": "<device>",
	"inode":  "<inode>",
	"size":   "<size>",
	"sha256": "<sha256>",
	"via":    "<via>", // proc, or path when the command had exited first
}

// hostKeys are present only on some hosts (a systemd scope); normalize
// drops them.
var hostKeys = map[string]bool{"scope": true}

// normalize replaces the run-specific values under n, which is the value
// of key, and the leaf and parent paths inside strings.
func normalize(n *node, key string, paths *strings.Replacer) {
	switch {
	case n.keys != nil:
		keys, vals := []string{}, []*node{}
		for i, k := range n.keys {
			if hostKeys[k] {
				continue
			}
			normalize(n.vals[i], k, paths)
			keys, vals = append(keys, k), append(vals, n.vals[i])
		}
		n.keys, n.vals = keys, vals
		return
	case n.elems != nil:
		elems := []*node{}
		for _, e := range n.elems {
			if s, ok := e.scalar.(string); ok && key == "caveats" && strings.Contains(s, "the kernel lacks") {
				continue // true of older kernels only
			}
			normalize(e, key, paths)
			elems = append(elems, e)
		}
		n.elems = elems
		return
	}
	switch {
	case placeholders[key] != "":
		n.scalar = placeholders[key]
	case strings.HasSuffix(key, "_at"):
		n.scalar = "<time>"
	case strings.HasSuffix(key, "_ms"):
		n.scalar = "<ms>"
	case strings.HasSuffix(key, "_usec"):
		n.scalar = "<usec>"
	default:
		if s, ok := n.scalar.(string); ok {
			n.scalar = paths.Replace(s)
		}
	}
}

// node is a JSON value that keeps the order of object keys, so that a
// golden file reads in the order the receipt is written.
type node struct {
	keys   []string // object keys; non-nil for an object
	vals   []*node  // object values
	elems  []*node  // array elements; non-nil for an array
	scalar any      // string, json.Number, bool or nil
}

// get returns the value of key in object n, or nil.
func (n *node) get(key string) *node {
	if n == nil {
		return nil
	}
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

func parseOrdered(b []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &node{keys: []string{}, vals: []*node{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k.(string)), append(n.vals, v)
		}
		_, err := dec.Token() // '}'
		return n, err
	case json.Delim('['):
		n := &node{elems: []*node{}}
		for dec.More() {
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		_, err := dec.Token() // ']'
		return n, err
	}
	return &node{scalar: tok}, nil
}

// write writes n indented by two spaces per level, like the receipt.
func (n *node) write(w *bytes.Buffer, indent string) {
	in := indent + "  "
	switch {
	case n.keys != nil:
		if len(n.keys) == 0 {
			w.WriteString("{}")
			return
		}
		w.WriteString("{\n")
		for i, k := range n.keys {
			w.WriteString(in + quote(k) + ": ")
			n.vals[i].write(w, in)
			if i < len(n.keys)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		w.WriteString(indent + "}")
	case n.elems != nil:
		if len(n.elems) == 0 {
			w.WriteString("[]")
			return
		}
		w.WriteString("[\n")
		for i, e := range n.elems {
			w.WriteString(in)
			e.write(w, in)
			if i < len(n.elems)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		w.WriteString(indent + "]")
	default:
		switch v := n.scalar.(type) {
		case string:
			w.WriteString(quote(v))
		case nil:
			w.WriteString("null")
		default:
			fmt.Fprint(w, v)
		}
	}
}

// quote encodes s as a JSON string without HTML escaping, for goldens a
// person reads.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// lineDiff shows where got and want first differ, with a little context.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	from := max(i-3, 0)
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d\n", i+1)
	for _, side := range []struct {
		name  string
		lines []string
	}{{"got", g}, {"want", w}} {
		b.WriteString(side.name + ":\n")
		for j := from; j < min(i+4, len(side.lines)); j++ {
			mark := "  "
			if j == i {
				mark = "> "
			}
			b.WriteString(mark + side.lines[j] + "\n")
		}
	}
	return b.String()
}
