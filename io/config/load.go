package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"heat/configs"
	"heat/internal/textdist"
	"heat/io/media"
)

// BuiltinSource is the source name of the embedded default problem
// (configs/default.toml) in messages.
const BuiltinSource = "built-in default"

// Load layers file (or, when file is "", the built-in default problem) and
// the --set overrides sets ("key=value") over Default, then resolves derived
// defaults and validates. Errors are *Error values.
func Load(file string, sets []string) (*Config, error) {
	c, src, err := layer(file, sets)
	if err != nil {
		return nil, err
	}
	if err := finish(c, src); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate fills the derived defaults (grid lengths, profile centres, sine
// modes) and checks c as Load does, for a Config built or changed in code —
// one read back from a checkpoint, or one whose rank count the MPI world
// fixed. Errors are *Error values without a source.
func (c *Config) Validate() error { return finish(c, &sources{whole: true}) }

// layer builds the Config of every TOML layer: defaults, the file or the
// built-in problem, then each --set in order.
func layer(file string, sets []string) (*Config, *sources, error) {
	c := Default()
	src := &sources{}
	if file == "" {
		if err := decodeDoc(c, src, BuiltinSource, string(configs.Default()), true); err != nil {
			return nil, nil, err
		}
	} else if err := decodeFile(c, src, file); err != nil {
		return nil, nil, err
	}
	for _, s := range sets {
		if err := applySet(c, src, s); err != nil {
			return nil, nil, err
		}
	}
	return c, src, nil
}

// decodeFile decodes config file (or, when no such file exists, the
// embedded example problem of that name) onto c.
func decodeFile(c *Config, src *sources, file string) error {
	data, err := os.ReadFile(file)
	source := file
	if errors.Is(err, fs.ErrNotExist) {
		if ex, ok := configs.Lookup(file); ok {
			data, source, err = ex.Text, "example "+ex.Name, nil
		}
	}
	if err != nil {
		return &Error{Source: fmt.Sprintf("config file %q", file), Msg: readProblem(err) + exampleHint(file)}
	}
	before := src.n
	if err := decodeDoc(c, src, source, string(data), true); err != nil {
		return err
	}
	if src.n == before {
		src.notes = append(src.notes, fmt.Sprintf("config file %q sets no keys: running the built-in defaults (the default problem, heat config show default)", file))
	}
	return nil
}

// exampleHint names the embedded examples after a missing config file
// that looks like the name of one.
func exampleHint(file string) string {
	if strings.ContainsAny(file, "/\\") || strings.Contains(file, ".") && !strings.HasSuffix(file, ".toml") {
		return ""
	}
	var names []string
	for _, ex := range configs.Examples() {
		names = append(names, ex.Name)
	}
	return fmt.Sprintf(" (and no example problem of that name: %s; see heat config list)", strings.Join(names, ", "))
}

// readProblem says in a few words why a file could not be read.
func readProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// sources remembers which layer last set each dotted key, so that a
// validation error can say where the bad value came from.
type sources struct {
	by    map[string]origin
	n     int      // settings so far
	notes []string // what the user should hear about the layers
	// whole: the config was given whole, every key of it (Validate), so
	// its run.steps is a bound of its own next to run.t_end.
	whole bool
	// restart: the config continues a checkpoint (ResolveRestart), which
	// holds the media itself, so the map files are not read again.
	restart bool
}

// origin is the layer that set a key; seq orders the settings.
type origin struct {
	source string
	seq    int
}

// set records source as the origin of key, after every earlier setting.
func (s *sources) set(key, source string) {
	if s.by == nil {
		s.by = map[string]origin{}
	}
	s.n++
	s.by[key] = origin{source, s.n}
}

// exact is the origin of key itself (not of a table above it), and whether
// any layer set it.
func (s *sources) exact(key string) (origin, bool) {
	o, ok := s.by[key]
	return o, ok
}

// indices matches the array indices of a key, the [1] of material[1].k.
var indices = regexp.MustCompile(`\[\d+\]`)

// of is the source of key; else of the latest key below it (a per-face
// table set through boundary.z_lo.kind); else of its nearest parent table
// set as a whole (boundary.x_lo = {kind = "neumann"}); "" if no layer set
// it. The tables of an array count as the array: material[1].k is
// material.k, whichever layer set the array last.
func (s *sources) of(key string) string {
	key = indices.ReplaceAllString(key, "")
	if o, ok := s.by[key]; ok {
		return o.source
	}
	var below origin
	for k, o := range s.by {
		if strings.HasPrefix(k, key+".") && o.seq > below.seq {
			below = o
		}
	}
	if below.seq > 0 {
		return below.source
	}
	for {
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			return ""
		}
		key = key[:i]
		if o, ok := s.by[key]; ok {
			return o.source
		}
	}
}

// decodeDoc decodes the TOML document doc onto c, overwriting only the keys
// doc holds, and records source as their origin. Every key must be in the
// schema, spelt exactly (the decoder alone would also take "Grid.Shape"),
// and hold a value of the right type; lines says whether syntax errors
// should carry a line number (not for a one-line --set).
func decodeDoc(c *Config, src *sources, source, doc string, lines bool) error {
	var raw map[string]any
	md, err := toml.Decode(doc, &raw)
	if err != nil {
		return syntaxError(source, err, lines)
	}
	tables := map[string]bool{} // the arrays of tables checked whole
	for _, k := range md.Keys() {
		if err := checkKey(raw, k, tables); err != nil {
			err.Source = source
			return err
		}
	}
	clearArrays(reflect.ValueOf(c).Elem(), raw)
	md, err = toml.Decode(doc, c)
	if err != nil {
		// checkKey has vetted every key and value; what is left are range
		// limits of the decoder, such as an integer too big for a float.
		return decoderError(source, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return &Error{Source: source, Msg: fmt.Sprintf("unknown key %q", u[0].String())}
	}
	for _, k := range md.Keys() {
		src.set(k.String(), source)
	}
	return nil
}

// clearArrays empties each field of the struct v that the decoded
// document raw gives an array for, at any depth, so that the layer's array
// replaces the one below whole. The decoder alone writes an array of
// tables over the tables already there, by index: a --set material=[…]
// would keep the file's materials past its own, and every key one of its
// tables leaves out (fixed, k) from the file's table of that index.
func clearArrays(v reflect.Value, raw map[string]any) {
	for name, x := range raw {
		field, ok := fieldByTag(v.Type(), name)
		if !ok {
			continue
		}
		f := v.FieldByIndex(field.Index)
		switch x := x.(type) {
		case []any, []map[string]any:
			f.Set(reflect.Zero(f.Type()))
		case map[string]any:
			if leaf(f.Type()) {
				continue // a value of its own ({table = …}), decoded whole
			}
			if f.Kind() == reflect.Pointer {
				if f.IsNil() {
					continue
				}
				f = f.Elem()
			}
			if f.Kind() == reflect.Struct {
				clearArrays(f, x)
			}
		}
	}
}

// syntaxError reports a TOML syntax error of source, with its line number
// when lines is set.
func syntaxError(source string, err error, lines bool) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		if lines {
			return &Error{Source: source, Msg: fmt.Sprintf("line %d: %s", pe.Position.Line, pe.Message)}
		}
		return &Error{Source: source, Msg: pe.Message}
	}
	return &Error{Source: source, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

// decoderMsg is the shape of the TOML decoder's own errors:
// toml: line 2 (last key "equation.alpha"): 9007199254740993 is out of ...
var decoderMsg = regexp.MustCompile(`^toml: (?:line \d+ )?\(last key "([^"]*)"\): (.*)$`)

// decoderError rewrites an error of the TOML decoder in this package's
// terms: source, key, message.
func decoderError(source string, err error) *Error {
	if m := decoderMsg.FindStringSubmatch(err.Error()); m != nil {
		return &Error{Source: source, Key: m[1], Msg: m[2]}
	}
	return &Error{Source: source, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

var configType = reflect.TypeFor[Config]()

// checkKey checks every prefix of the key k of a decoded document against
// the schema (the toml tags of Config): each must name a field, spelt
// exactly, and the value at each prefix must fit the field's type. An
// array of tables is checked whole the first time a key reaches it and
// recorded in tables: the decoder lists its keys once a table, so checking
// it again for each would take time quadratic in its length.
func checkKey(raw map[string]any, k toml.Key, tables map[string]bool) *Error {
	t := configType
	for i := range k {
		field, ok := fieldByTag(t, k[i])
		if !ok {
			return unknownKey(t, k[:i+1])
		}
		t = field.Type
		v, ok := rawAt(raw, k[:i+1])
		if !ok {
			continue // below an array of tables; its parent failed already
		}
		if want, ok := fits(t, v); !ok {
			return &Error{Key: k[:i+1].String(), Msg: misfit(want, v)}
		}
		if leaf(t) {
			return nil // a value with a table form of its own ({table = …})
		}
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			// An array of tables ([[material]]): every key of every table
			// is checked here, by its index, so the keys below it are too.
			prefix := k[:i+1].String()
			if tables[prefix] {
				return nil
			}
			tables[prefix] = true
			return checkTables(t.Elem(), v, prefix)
		}
	}
	return nil
}

// checkTables checks each table of the array of tables v (the value of key
// prefix, which fits has accepted) against the struct type t: each key must
// name a field, spelt exactly, and its value must fit the field's type.
// Keys are named with the table's index, material[1].radius.
func checkTables(t reflect.Type, v any, prefix string) *Error {
	var tables []map[string]any
	switch v := v.(type) {
	case []map[string]any:
		tables = v
	case []any:
		for _, e := range v {
			tables = append(tables, e.(map[string]any))
		}
	}
	for i, m := range tables {
		names := slices.Sorted(maps.Keys(m))
		for _, name := range names {
			field, ok := fieldByTag(t, name)
			if !ok {
				return unknownField(t, fmt.Sprintf("%s[%d].%s", prefix, i, name), name)
			}
			if want, ok := fits(field.Type, m[name]); !ok {
				return &Error{Key: fmt.Sprintf("%s[%d].%s", prefix, i, name), Msg: misfit(want, m[name])}
			}
		}
	}
	return nil
}

// unknownField reports key, whose last part name is not a field of the
// table type parent, suggesting the nearest field name when one is close.
func unknownField(parent reflect.Type, key, name string) *Error {
	msg := fmt.Sprintf("unknown key %q", key)
	if best, ok := nearest(parent, name); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", strings.TrimSuffix(key, name)+best)
	}
	return &Error{Msg: msg}
}

// fieldByTag finds the field of struct type t (or *struct) whose toml tag
// is name, case-sensitively.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("toml"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// tagsOf lists the toml keys of struct type t (or *struct).
func tagsOf(t reflect.Type) []string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ","); tag != "" {
			names = append(names, tag)
		}
	}
	return names
}

// unknownKey reports key k, whose last part is not a field of the table
// type parent, suggesting the nearest field name when one is close.
func unknownKey(parent reflect.Type, k toml.Key) *Error {
	msg := fmt.Sprintf("unknown key %q", k.String())
	if best, ok := nearest(parent, k[len(k)-1]); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", append(slices.Clone(k[:len(k)-1]), best).String())
	}
	return &Error{Msg: msg}
}

// nearest is the field name of the table type parent closest to name, if
// one is close enough to be the one meant.
func nearest(parent reflect.Type, name string) (string, bool) {
	best, bestD := "", 3
	for _, tag := range tagsOf(parent) {
		if d := textdist.Edits(strings.ToLower(name), tag); d < bestD || (d == bestD && tag < best) {
			best, bestD = tag, d
		}
	}
	return best, best != "" && bestD <= max(1, len(name)/3)
}

// rawAt is the decoded value at key k, descending through tables only.
func rawAt(raw map[string]any, k toml.Key) (any, bool) {
	var v any = raw
	for _, part := range k {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// leaf reports whether values of type t check themselves (accepts): the
// keys below one are its own, not the schema's.
func leaf(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	_, ok := reflect.Zero(t).Interface().(interface{ accepts(any) (string, bool) })
	return ok
}

// fits reports whether the decoded TOML value v can be stored in a field of
// type t, and otherwise what t expects, in words a user understands.
func fits(t reflect.Type, v any) (want string, ok bool) {
	isInt := func(v any) bool { _, ok := v.(int64); return ok }
	isNum := func(v any) bool {
		switch v.(type) {
		case int64, float64:
			return true
		}
		return false
	}
	all := func(v any, each func(any) bool) bool {
		a, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range a {
			if !each(e) {
				return false
			}
		}
		return true
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if a, ok := reflect.Zero(t).Interface().(interface{ accepts(any) (string, bool) }); ok {
		return a.accepts(v)
	}
	switch t.Kind() {
	case reflect.Struct:
		_, ok := v.(map[string]any)
		return "a table", ok
	case reflect.String:
		_, ok := v.(string)
		return "a string", ok
	case reflect.Bool:
		_, ok := v.(bool)
		return "true or false", ok
	case reflect.Int, reflect.Int64:
		return "an integer", isInt(v)
	case reflect.Float64:
		return "a number", isNum(v)
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Int, reflect.Int64:
			return "an array of integers", all(v, isInt)
		case reflect.Float64:
			return "an array of numbers", all(v, isNum)
		case reflect.String:
			return "an array of strings", all(v, func(e any) bool { _, ok := e.(string); return ok })
		case reflect.Struct:
			if _, ok := v.([]map[string]any); ok {
				return "an array of tables", true
			}
			return "an array of tables", all(v, func(e any) bool { _, ok := e.(map[string]any); return ok })
		}
	}
	panic(fmt.Sprintf("config: no TOML rule for field type %s", t))
}

// misfit says that the decoded value v is not what a field wants. A
// number or a bool given for a string key gets the quoted form to use.
func misfit(want string, v any) string {
	if want != "a string" {
		return fmt.Sprintf("expected %s (got %s)", want, formatValue(v))
	}
	msg := fmt.Sprintf("must be a string (got %s)", formatValue(v))
	switch v.(type) {
	case int64, float64, bool:
		msg += fmt.Sprintf("; quote it, %s, to mean the text", quoteTOML(formatTOML(v)))
	}
	return msg
}

// formatValue writes a decoded TOML value back roughly as TOML, shortened
// to fit in a message.
func formatValue(v any) string {
	s := formatTOML(v)
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return s
}

func formatTOML(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return formatFloat(v)
	case bool:
		return strconv.FormatBool(v)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = formatTOML(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	}
	return fmt.Sprintf("%v", v)
}

// formatFloat writes a float as TOML does, nan and inf included.
func formatFloat(v float64) string { return media.FormatNumber(v) }

// applySet applies one --set override "key=value". The value is TOML
// (grid.shape=[512,512], equation.kind="poisson"); a value that is not TOML
// is taken as a bare string (equation.kind=poisson, output.dir=runs/a), and
// parallel.dims also takes the flag form 4x2. A number or a bool is not a
// string: output.label=5 is refused, output.label="5" is the text.
func applySet(c *Config, src *sources, arg string) error {
	source := "--set " + arg
	key, val, ok := strings.Cut(arg, "=")
	key, val = strings.TrimSpace(key), strings.TrimSpace(val)
	if !ok || key == "" {
		return &Error{Source: source, Msg: "expected key=value, as in --set grid.shape=[512,512]"}
	}
	if strings.ContainsAny(arg, "\n\r") {
		return &Error{Source: source, Msg: "the value must fit on one line"}
	}
	doc := key + " = " + val
	k, v, err := parseSet(doc)
	if err != nil {
		// Not TOML: maybe a bare word. If the quoted form does not parse
		// either, the key itself is wrong and the first error says why.
		quoted := key + " = " + quoteTOML(val)
		k2, v2, err2 := parseSet(quoted)
		if err2 != nil {
			e := syntaxError(source, err2, false)
			e.Msg = fmt.Sprintf("bad key %q: %s", key, e.Msg)
			return e
		}
		k, v, doc = k2, v2, quoted
	}
	if s, ok := v.(string); ok && k.String() == "parallel.dims" {
		dims, err := ParseDims(s)
		if err != nil {
			err.(*Error).Source = source
			return err
		}
		doc = key + " = " + formatTOML(intsToAny(dims))
	}
	return decodeDoc(c, src, source, doc, false)
}

// parseSet parses the one-line document of a --set and returns its deepest
// key and that key's value.
func parseSet(doc string) (toml.Key, any, error) {
	var raw map[string]any
	md, err := toml.Decode(doc, &raw)
	if err != nil {
		return nil, nil, err
	}
	var k toml.Key
	for _, key := range md.Keys() {
		if len(key) > len(k) {
			k = key
		}
	}
	v, _ := rawAt(raw, k)
	return k, v, nil
}

// quoteTOML writes s as a TOML basic string.
func quoteTOML(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func intsToAny(xs []int) []any {
	a := make([]any, len(xs))
	for i, x := range xs {
		a[i] = int64(x)
	}
	return a
}
