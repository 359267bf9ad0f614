package expr

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"

	"heat/internal/safefile"
	"heat/io/media"
)

// MaxTableBytes bounds what is read of a table file: some two million rows.
const MaxTableBytes = 64 << 20

// Table is a value given in time by a CSV file of rows t,value: linear in
// between, the first value before the first t and the last after the last.
type Table struct {
	path   string
	t, val []float64
}

// TableError is a mistake in a table file: the config key that named it,
// the file as given, the line (from 1; 0 when the mistake is the whole
// file's) and what.
type TableError struct {
	Key, Path string
	Line      int
	Msg       string
}

// Error is "boundary.x_hi.value: wall.csv line 4: t = 2 is not after 3".
func (e *TableError) Error() string {
	at := e.Path
	if e.Line > 0 {
		at = fmt.Sprintf("%s line %d", e.Path, e.Line)
	}
	if e.Key == "" {
		return at + ": " + e.Msg
	}
	return e.Key + ": " + at + ": " + e.Msg
}

// LoadTable reads the table file path for config key key. The file is
// CSV: an optional header line (t,value, or any two names), then rows
// t,value — t strictly increasing, both finite numbers, at least one row.
// Blank lines and lines starting with # are skipped. Errors are
// *TableError naming the line.
func LoadTable(key, path string) (*Table, error) {
	fail := func(line int, format string, args ...any) error {
		return &TableError{Key: key, Path: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	b, err := safefile.ReadFile(path, MaxTableBytes)
	var big *safefile.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(0, "no such file")
	case errors.As(err, &big):
		return nil, fail(0, "%d bytes, more than the %d a table may take", big.Size, big.Max)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fail(0, "%v", err)
	}
	tb := &Table{path: path}
	first := true
	for i, line := range strings.Split(string(b), "\n") {
		n := i + 1
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, ",")
		if len(fields) != 2 {
			return nil, fail(n, "%d fields in %q; a row is t,value", len(fields), short(line))
		}
		ts, vs := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])
		t, errT := strconv.ParseFloat(ts, 64)
		v, errV := strconv.ParseFloat(vs, 64)
		if first && errT != nil && errV != nil {
			first = false
			continue // the header
		}
		first = false
		switch {
		case errT != nil:
			return nil, fail(n, "t %q is not a number", short(ts))
		case errV != nil:
			return nil, fail(n, "value %q is not a number", short(vs))
		case math.IsNaN(t) || math.IsInf(t, 0):
			return nil, fail(n, "t = %s is not finite", media.FormatNumber(t))
		case math.IsNaN(v) || math.IsInf(v, 0):
			return nil, fail(n, "the value at t = %s is %s, not finite", media.FormatNumber(t), media.FormatNumber(v))
		}
		if k := len(tb.t); k > 0 && !(t > tb.t[k-1]) {
			return nil, fail(n, "t = %s is not after %s; t must increase from row to row", media.FormatNumber(t), media.FormatNumber(tb.t[k-1]))
		}
		tb.t = append(tb.t, t)
		tb.val = append(tb.val, v)
	}
	if len(tb.t) == 0 {
		return nil, fail(0, "holds no rows; a table is rows t,value (a header line t,value first is optional)")
	}
	return tb, nil
}

// short cuts a text for a message.
func short(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:37]) + "..."
	}
	return s
}

// At is the table's value at time t: linear between the rows around t
// (exactly a row's value at its t), the first row's value before it, the
// last's after it; NaN at NaN.
func (tb *Table) At(t float64) float64 {
	ts, vs := tb.t, tb.val
	switch {
	case math.IsNaN(t):
		return t
	case t <= ts[0]:
		return vs[0]
	case t >= ts[len(ts)-1]:
		return vs[len(vs)-1]
	}
	// ts[i-1] <= t < ts[i]
	i := sort.SearchFloat64s(ts, t)
	if ts[i] == t {
		return vs[i]
	}
	w := (t - ts[i-1]) / (ts[i] - ts[i-1])
	return (1-w)*vs[i-1] + w*vs[i]
}

// Path is the table's file as given.
func (tb *Table) Path() string { return tb.path }

// Len is the number of rows.
func (tb *Table) Len() int { return len(tb.t) }
