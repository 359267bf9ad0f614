package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard is checkpoint.shard: how a checkpoint's chunks go into files.
// "auto" (the default) shapes shards like the writers' boxes, so that a
// checkpoint is one file per writer; "none" writes a file per chunk (the
// layout of format 1 and 2 checkpoints); a shape, C order, fixes the
// shards. In TOML and JSON it is the string or the array; an empty array is
// "none" (what format 1 and 2 checkpoints' configs hold).
type Shard struct {
	None  bool  // a file per chunk
	Shape []int // the shard shape; empty (with None false): auto
}

// Auto reports whether the shards follow the writers' boxes.
func (s Shard) Auto() bool { return !s.None && len(s.Shape) == 0 }

// String is the value as a user writes it: auto, none or [a, b].
func (s Shard) String() string {
	switch {
	case s.None:
		return "none"
	case s.Auto():
		return "auto"
	}
	parts := make([]string, len(s.Shape))
	for i, n := range s.Shape {
		parts[i] = fmt.Sprint(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// accepts is the schema check of a decoded TOML value (see fits).
func (Shard) accepts(v any) (want string, ok bool) {
	const want0 = `"auto", "none" or an array of integers`
	switch v := v.(type) {
	case string:
		return want0, v == "auto" || v == "none"
	case []any:
		for _, e := range v {
			if _, ok := e.(int64); !ok {
				return want0, false
			}
		}
		return want0, true
	}
	return want0, false
}

// UnmarshalTOML takes "auto", "none" or an array of integers.
func (s *Shard) UnmarshalTOML(v any) error {
	if _, ok := s.accepts(v); !ok {
		return fmt.Errorf("expected \"auto\", \"none\" or an array of integers (got %v)", v)
	}
	*s = Shard{}
	switch v := v.(type) {
	case string:
		s.None = v == "none"
	case []any:
		s.None = len(v) == 0
		for _, e := range v {
			s.Shape = append(s.Shape, int(e.(int64)))
		}
	}
	return nil
}

// MarshalTOML writes "auto", "none" or the shape, as UnmarshalTOML reads
// them (without it a shard would be written as a table of its fields).
func (s Shard) MarshalTOML() ([]byte, error) {
	if len(s.Shape) > 0 && !s.None {
		return []byte(s.String()), nil
	}
	return []byte(strconv.Quote(s.String())), nil
}

// MarshalJSON writes "auto", "none" or the shape.
func (s Shard) MarshalJSON() ([]byte, error) {
	if len(s.Shape) > 0 && !s.None {
		return json.Marshal(s.Shape)
	}
	return json.Marshal(s.String())
}

// UnmarshalJSON reads what MarshalJSON writes, and the empty array.
func (s *Shard) UnmarshalJSON(data []byte) error {
	var word string
	if json.Unmarshal(data, &word) == nil {
		if word != "auto" && word != "none" {
			return fmt.Errorf("checkpoint.shard: expected \"auto\", \"none\" or an array of integers (got %q)", word)
		}
		*s = Shard{None: word == "none"}
		return nil
	}
	var shape []int
	if err := json.Unmarshal(data, &shape); err != nil {
		return fmt.Errorf("checkpoint.shard: expected \"auto\", \"none\" or an array of integers (got %s)", data)
	}
	*s = Shard{None: len(shape) == 0}
	if !s.None {
		s.Shape = slices.Clip(shape)
	}
	return nil
}
