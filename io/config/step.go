package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Step is equation.dt: a number — the step (0: the explicit scheme's pick,
// 0.9 × the stability limit) — or "auto": implicit steps chosen by an
// estimate of their own error (equation.rtol, atol, dt_min, dt_max,
// dt_initial). In TOML and JSON it is the number or the string.
type Step struct {
	V    float64 // the step, when not Auto
	Auto bool
}

// String is the value as a user writes it.
func (s Step) String() string {
	if s.Auto {
		return `"auto"`
	}
	return formatFloat(s.V)
}

// accepts is the schema check of a decoded TOML value (see fits).
func (Step) accepts(v any) (want string, ok bool) {
	const want0 = `a number or "auto"`
	switch v := v.(type) {
	case int64, float64:
		return want0, true
	case string:
		return want0, v == "auto"
	}
	return want0, false
}

// UnmarshalTOML takes a number or "auto".
func (s *Step) UnmarshalTOML(v any) error {
	if want, ok := s.accepts(v); !ok {
		return fmt.Errorf("expected %s (got %v)", want, v)
	}
	*s = Step{}
	switch v := v.(type) {
	case int64:
		s.V = float64(v)
	case float64:
		s.V = v
	case string:
		s.Auto = true
	}
	return nil
}

// MarshalTOML writes the number or "auto".
func (s Step) MarshalTOML() ([]byte, error) { return []byte(s.String()), nil }

// MarshalJSON writes the number or "auto"; a number that is not finite
// as the string "NaN", "+Inf" or "-Inf" (the report's convention: a report
// always parses).
func (s Step) MarshalJSON() ([]byte, error) {
	switch {
	case s.Auto:
		return []byte(`"auto"`), nil
	case math.IsNaN(s.V) || math.IsInf(s.V, 0):
		return json.Marshal(strconv.FormatFloat(s.V, 'g', -1, 64))
	}
	return json.Marshal(s.V)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Step) UnmarshalJSON(data []byte) error {
	*s = Step{}
	if json.Unmarshal(data, &s.V) == nil {
		return nil
	}
	var word string
	if json.Unmarshal(data, &word) == nil {
		if word == "auto" {
			s.Auto = true
			return nil
		}
		if v, err := strconv.ParseFloat(word, 64); err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			s.V = v
			return nil
		}
	}
	return fmt.Errorf("equation.dt: expected a number or \"auto\" (got %s)", strconv.Quote(string(data)))
}
