package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/tether-run/tether/session"
)

// lineFormat is a parsed --format TEMPLATE: literal text and {{.field}}
// placeholders (.a.b for a field of an object), the part of Go's
// template syntax that docker's --format users write. Not text/template
// itself: its reflection keeps every method of the binary alive (+2 MB,
// paid by every tether run's start).
type lineFormat struct {
	lits  []string   // len(paths)+1 literals around the placeholders
	paths [][]string // each placeholder's field path
}

// parseFormat parses text; \t and \n as written are a tab and a newline,
// as docker takes them.
func parseFormat(text string) (*lineFormat, error) {
	text = strings.NewReplacer(`\t`, "\t", `\n`, "\n").Replace(text)
	f := &lineFormat{}
	for {
		i := strings.Index(text, "{{")
		if i < 0 {
			if strings.Contains(text, "}}") {
				return nil, fmt.Errorf(`"}}" without "{{"`)
			}
			f.lits = append(f.lits, text)
			return f, nil
		}
		f.lits = append(f.lits, text[:i])
		rest := text[i+2:]
		j := strings.Index(rest, "}}")
		if j < 0 {
			return nil, fmt.Errorf(`"{{" without "}}"`)
		}
		field := strings.TrimSpace(rest[:j])
		path := strings.Split(strings.TrimPrefix(field, "."), ".")
		if !strings.HasPrefix(field, ".") || slices.Contains(path, "") || strings.ContainsAny(field, " |()\"") {
			return nil, fmt.Errorf("{{%s}}: only fields are taken, as {{.name}} or {{.exit.code}}", rest[:j])
		}
		if !slices.Contains(statusKeys(), path[0]) {
			return nil, fmt.Errorf("{{%s}}: no field %q; the fields are --json's: %s", rest[:j], path[0], strings.Join(statusKeys(), ", "))
		}
		f.paths = append(f.paths, path)
		text = rest[j+2:]
	}
}

// line renders one session: a field it does not have (omitted as empty
// in its JSON) is empty; an object or list is its JSON.
func (f *lineFormat) line(s session.Status) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for i, p := range f.paths {
		out.WriteString(f.lits[i])
		out.WriteString(fieldText(fields, p))
	}
	out.WriteString(f.lits[len(f.lits)-1])
	return out.Bytes(), nil
}

// fieldText is the value at path in fields, as text.
func fieldText(fields map[string]json.RawMessage, path []string) string {
	v, ok := fields[path[0]]
	if !ok {
		return ""
	}
	if len(path) > 1 {
		var sub map[string]json.RawMessage
		if json.Unmarshal(v, &sub) != nil {
			return ""
		}
		return fieldText(sub, path[1:])
	}
	var str string
	if json.Unmarshal(v, &str) == nil {
		return str
	}
	if string(v) == "null" {
		return ""
	}
	return string(v)
}

// statusKeys are the JSON names of session.Status's fields, its record's
// included: what --format may name.
var statusKeys = sync.OnceValue(func() []string {
	var keys []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case f.Anonymous && name == "" && ft.Kind() == reflect.Struct:
				walk(ft)
			case name != "" && name != "-" && f.IsExported() && !slices.Contains(keys, name):
				keys = append(keys, name)
			}
		}
	}
	walk(reflect.TypeFor[session.Status]())
	return keys
})
