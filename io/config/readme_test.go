package config

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"
)

// proseDefaults are the README defaults written in words, and what
// Default holds for them as JSON: null where resolution fills the value
// from the grid (1.0 per axis, the domain centre, 1 per axis) or a face
// takes the [boundary] defaults (inherit); "" where the checkpoint folder
// follows output.dir.
var proseDefaults = map[string]string{
	"1.0 per axis":             "null",
	"domain centre":            "null",
	"1 per axis":               "null",
	"inherit":                  "null",
	"<output.dir>/checkpoints": `""`,
	"none":                     "null", // the keys of an array of tables ([[material]]), which has no tables by default
}

// readmeRow is one row of the README's Configuration table: the keys it
// documents (".post" after "multigrid.pre" is "multigrid.post"; a key may
// hold <face> or end in .*) and the default of each, as written.
type readmeRow struct {
	keys     []string
	defaults []string
}

var backticked = regexp.MustCompile("`([^`]*)`")

// readmeTable parses the rows `| \`key\` | default | meaning |` of the
// README's Configuration table.
func readmeTable(t *testing.T) []readmeRow {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(data)
	i := strings.Index(text, "\n## Configuration\n")
	require.GreaterOrEqual(t, i, 0)
	text = text[i+1:]
	head := strings.Index(text, "\n| key | default | meaning |\n")
	require.GreaterOrEqual(t, head, 0, "the Configuration table's header")
	var rows []readmeRow
	for _, line := range strings.Split(text[head+1:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break // the end of the table
		}
		cells := regexp.MustCompile(`[^\\]\|`).Split(line+" ", -1) // | not \|
		require.GreaterOrEqual(t, len(cells), 3, line)
		var r readmeRow
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			k := m[1]
			if strings.HasPrefix(k, ".") {
				first := r.keys[0]
				k = first[:strings.LastIndexByte(first, '.')] + k
			}
			r.keys = append(r.keys, k)
		}
		def := strings.TrimSpace(cells[1])
		if m := backticked.FindAllStringSubmatch(def, -1); m != nil {
			for _, d := range m {
				r.defaults = append(r.defaults, d[1])
			}
		} else {
			r.defaults = []string{def}
		}
		rows = append(rows, r)
	}
	require.NotEmpty(t, rows)
	return rows
}

// schemaKeys lists every leaf key of the schema, per-face keys with
// <face> for the face.
func schemaKeys(ty reflect.Type, prefix string, out *[]string) {
	for _, name := range tagsOf(ty) {
		f, _ := fieldByTag(ty, name)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		_, custom := reflect.Zero(ft).Interface().(interface{ accepts(any) (string, bool) })
		switch {
		case ft == reflect.TypeFor[Face]():
			if !slices.Contains(*out, prefix+"<face>.kind") {
				schemaKeys(ft, prefix+"<face>.", out)
			}
		case ft.Kind() == reflect.Struct && !custom:
			schemaKeys(ft, prefix+name+".", out)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct: // [[material]]
			schemaKeys(ft.Elem(), prefix+name+".", out)
		default:
			*out = append(*out, prefix+name)
		}
	}
}

// defaultAt is Default's value at the dotted key as JSON; null below a
// nil pointer (a face without an override) and below an array of tables
// (Default has none).
func defaultAt(t *testing.T, key string) any {
	t.Helper()
	key = strings.ReplaceAll(key, "<face>", "x_lo")
	v := reflect.ValueOf(Default()).Elem()
	for _, part := range strings.Split(key, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil
			}
			v = v.Elem()
		}
		if v.Kind() == reflect.Slice {
			require.Zero(t, v.Len(), "README key %q: Default has no tables of this array", key)
			_, ok := fieldByTag(v.Type().Elem(), part)
			require.True(t, ok, "README key %q is not in the schema", key)
			return nil
		}
		f, ok := fieldByTag(v.Type(), part)
		require.True(t, ok, "README key %q is not in the schema", key)
		v = v.FieldByIndex(f.Index)
	}
	return jsonValue(t, v.Interface())
}

func jsonValue(t *testing.T, x any) any {
	t.Helper()
	data, err := json.Marshal(x)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	return v
}

// The README's Configuration table is the schema with its defaults: every
// key of Config has a row, every row's key is in the schema, and every
// default is Default's (a TOML value, or one of proseDefaults).
func TestReadmeConfigTableMatchesDefaults(t *testing.T) {
	var keys []string
	schemaKeys(configType, "", &keys)
	documented := map[string]bool{}
	for _, r := range readmeTable(t) {
		for i, key := range r.keys {
			if prefix, ok := strings.CutSuffix(key, ".*"); ok {
				// A whole table, "source.*": its keys are documented; the
				// default names the keys it gives, `kind = "none"`.
				for _, k := range keys {
					if strings.HasPrefix(k, prefix+".") {
						documented[k] = true
					}
				}
				var given map[string]any
				_, err := toml.Decode(r.defaults[0], &given)
				require.NoError(t, err, key)
				for k, v := range given {
					require.Equal(t, jsonValue(t, v), defaultAt(t, prefix+"."+k), "README %s: %s", key, r.defaults[0])
				}
				continue
			}
			require.Contains(t, keys, key, "README documents %q, which is not a key", key)
			documented[key] = true
			def := r.defaults[min(i, len(r.defaults)-1)]
			want, prose := proseDefaults[def]
			if !prose {
				var doc map[string]any
				_, err := toml.Decode("v = "+def, &doc)
				require.NoError(t, err, "README %s: default %q is neither TOML nor one of proseDefaults", key, def)
				want = string(must(json.Marshal(doc["v"])))
			}
			var w any
			require.NoError(t, json.Unmarshal([]byte(want), &w))
			require.Equal(t, w, defaultAt(t, key), "README %s: default %s", key, def)
		}
	}
	var missing []string
	for _, k := range keys {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing, "keys without a row in the README's Configuration table")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
