package config

import (
	_ "embed"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// The key reference: every key of the schema with its type, default, units,
// whether a restart may change it and what it means. The descriptions are
// the comments on the config types' fields themselves (types.go, probe.go,
// embedded and read here), so that a key and its description cannot drift
// apart; units are the fields' `unit` tags.

//go:embed types.go
var typesSource string

//go:embed probe.go
var probeSource string

// KeyInfo describes one config key.
type KeyInfo struct {
	Key     string `json:"key"`               // dotted path; "[]" marks an array of tables ("material[].k")
	Type    string `json:"type"`              // integer, number, string, boolean, array of …, value (number, expression or table)
	Default string `json:"default"`           // the built-in default as TOML would write it; "" where unset
	Units   string `json:"units,omitempty"`   // physical units where they apply (any consistent set)
	Restart bool   `json:"restart"`           // a restart may change it
	Doc     string `json:"doc"`               // what it means, its choices and refusals
	Table   string `json:"table,omitempty"`   // the description of the table it belongs to
	Section string `json:"section,omitempty"` // the top-level table
}

var (
	keysOnce sync.Once
	keyList  []KeyInfo
)

// Keys is every key of the schema, in the order of the config types.
func Keys() []KeyInfo {
	keysOnce.Do(func() {
		docs := fieldDocs(typesSource, probeSource)
		def := reflect.ValueOf(Default()).Elem()
		walkKeys(configType, def, "", docs, &keyList, "")
	})
	return slices.Clone(keyList)
}

// KeysWith is the keys whose path is prefix or lies under it (all of them
// for "").
func KeysWith(prefix string) []KeyInfo {
	prefix = strings.TrimSuffix(prefix, ".")
	var out []KeyInfo
	for _, k := range Keys() {
		plain := strings.ReplaceAll(k.Key, "[]", "")
		if prefix == "" || k.Key == prefix || plain == prefix ||
			strings.HasPrefix(k.Key, prefix+".") || strings.HasPrefix(plain, prefix+".") || strings.HasPrefix(k.Key, prefix+"[]") {
			out = append(out, k)
		}
	}
	return out
}

// docs are the comments of the config types: per type, its own and each
// field's (the doc comment above the field, or the comment after it).
type docs map[string]struct {
	doc    string
	fields map[string]string
}

func fieldDocs(srcs ...string) docs {
	out := docs{}
	for _, src := range srcs {
		f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ParseComments)
		if err != nil {
			panic("config: the embedded config types do not parse: " + err.Error())
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, s := range gd.Specs {
				ts := s.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				entry := out[ts.Name.Name]
				entry.doc = commentText(gd.Doc)
				entry.fields = map[string]string{}
				for _, fl := range st.Fields.List {
					text := commentText(fl.Doc)
					if c := commentText(fl.Comment); c != "" {
						text = strings.TrimSpace(text + " " + c)
					}
					for _, n := range fl.Names {
						entry.fields[n.Name] = text
					}
				}
				out[ts.Name.Name] = entry
			}
		}
	}
	return out
}

// commentText is a comment group as one paragraph (an indented block kept
// on lines of its own).
func commentText(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(g.Text(), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "\t"), strings.HasPrefix(line, "  "):
			b.WriteString("\n" + line)
		case b.Len() > 0 && strings.HasSuffix(b.String(), "\n"):
			b.WriteString(line)
		case b.Len() > 0:
			if strings.Contains(b.String(), "\n\t") && !strings.HasPrefix(line, "\t") {
				b.WriteString("\n")
			} else {
				b.WriteString(" ")
			}
			b.WriteString(line)
		default:
			b.WriteString(line)
		}
	}
	return strings.TrimSpace(b.String())
}

var (
	valueType = reflect.TypeFor[Value]()
	shardType = reflect.TypeFor[Shard]()
	stepType  = reflect.TypeFor[Step]()
)

// walkKeys appends the keys of struct type t (its default value def, which
// may be invalid where unset) under prefix.
func walkKeys(t reflect.Type, def reflect.Value, prefix string, d docs, out *[]KeyInfo, section string) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
		if def.IsValid() && !def.IsNil() {
			def = def.Elem()
		} else {
			def = reflect.Value{}
		}
	}
	td := d[t.Name()]
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" {
			continue
		}
		key := prefix + name
		sec := section
		if sec == "" {
			sec = name
		}
		var fv reflect.Value
		if def.IsValid() {
			fv = def.Field(i)
		}
		ft := f.Type
		elem := ft
		if elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		switch {
		case elem.Kind() == reflect.Struct && elem != valueType && elem != shardType && elem != stepType:
			walkKeys(ft, fv, key+".", d, out, sec)
			continue
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			walkKeys(ft.Elem(), reflect.Value{}, key+"[].", d, out, sec)
			continue
		}
		*out = append(*out, KeyInfo{
			Key:     key,
			Type:    typeName(ft),
			Default: defaultText(fv),
			Units:   f.Tag.Get("unit"),
			Restart: mutable(strings.ReplaceAll(key, "[]", "")),
			Doc:     td.fields[f.Name],
			Table:   td.doc,
			Section: sec,
		})
	}
}

// typeName is how a key's type reads in the reference.
func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == valueType:
		return "value (number, expression or table)"
	case t == shardType:
		return `"auto", "none" or array of integers`
	case t == stepType:
		return `number or "auto"`
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Int:
			return "array of integers"
		case reflect.Float64:
			return "array of numbers"
		case reflect.String:
			return "array of strings"
		}
	}
	return t.String()
}

// defaultText is a default value as a TOML value would read ("" for none).
func defaultText(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice) && v.IsNil() {
		return ""
	}
	if v.Type() == shardType {
		return `"` + v.Interface().(Shard).String() + `"`
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return ""
	}
	s := string(data)
	if v.Type() == valueType || v.Type() == reflect.PointerTo(valueType) {
		s = strings.Trim(s, `"`)
	}
	return s
}
