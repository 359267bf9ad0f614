package config

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Value is a face's value or Robin coefficient: a number, an expression of
// x, y, z and t (a string, io/expr), or a time table ({table = "wall.csv"}:
// t,value rows, linear in between, held outside). In TOML and JSON it is
// the number, the string or the table.
type Value struct {
	Num   float64
	Expr  string // an expression, when not empty
	Table string // a table's path, when not empty (relative to the current directory, as map paths are)
}

// Number is v as a plain number, when it is one.
func (v Value) Number() (float64, bool) { return v.Num, v.Expr == "" && v.Table == "" }

// String is v as a user writes it.
func (v Value) String() string {
	switch {
	case v.Expr != "":
		return strconv.Quote(v.Expr)
	case v.Table != "":
		return "{table = " + strconv.Quote(v.Table) + "}"
	}
	return formatFloat(v.Num)
}

// accepts is the schema check of a decoded TOML value (see fits).
func (Value) accepts(v any) (want string, ok bool) {
	const want0 = `a number, an expression of x, y, z, t (a string) or {table = "file.csv"}`
	switch v := v.(type) {
	case int64, float64, string:
		return want0, true
	case map[string]any:
		p, ok := v["table"].(string)
		return want0, ok && len(v) == 1 && p != ""
	}
	return want0, false
}

// UnmarshalTOML takes a number, a string or {table = "…"}.
func (v *Value) UnmarshalTOML(data any) error {
	if want, ok := v.accepts(data); !ok {
		return fmt.Errorf("expected %s (got %v)", want, data)
	}
	*v = Value{}
	switch d := data.(type) {
	case int64:
		v.Num = float64(d)
	case float64:
		v.Num = d
	case string:
		v.Expr = d
	case map[string]any:
		v.Table = d["table"].(string)
	}
	return nil
}

// MarshalTOML writes v as UnmarshalTOML reads it.
func (v Value) MarshalTOML() ([]byte, error) { return []byte(v.String()), nil }

// MarshalJSON writes the number, the string or {"table": path}.
func (v Value) MarshalJSON() ([]byte, error) {
	switch {
	case v.Expr != "":
		return json.Marshal(v.Expr)
	case v.Table != "":
		return json.Marshal(map[string]string{"table": v.Table})
	}
	return json.Marshal(v.Num)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Value) UnmarshalJSON(data []byte) error {
	*v = Value{}
	if json.Unmarshal(data, &v.Num) == nil {
		return nil
	}
	if json.Unmarshal(data, &v.Expr) == nil {
		return nil
	}
	var t map[string]string
	if err := json.Unmarshal(data, &t); err != nil || t["table"] == "" || len(t) != 1 {
		return fmt.Errorf("expected a number, a string or {\"table\": path} (got %s)", data)
	}
	v.Table = t["table"]
	return nil
}
