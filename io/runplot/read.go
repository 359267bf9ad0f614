// Package runplot draws a run's diagnostics.csv as plots: the field's min,
// max and mean and the total heat over time for a heat run, the residual
// per iteration on a logarithmic axis for a Poisson run. It reads the CSV
// and draws (with gonum.org/v1/plot); what the run was (its report) and
// where the plots go are its caller's.
package runplot

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Header is the first line of diagnostics.csv as package run writes it.
var Header = []string{"step", "time", "min", "max", "mean", "total", "residual"}

// Row is one row of diagnostics.csv: the step (or iteration), the
// simulated time, the field's min, max and mean, the total heat ∫u dV and
// the residual of the last check.
type Row struct {
	Step                                  int
	Time, Min, Max, Mean, Total, Residual float64
}

// Read parses the diagnostics file at path (Parse).
func Read(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads diagnostics.csv from r. Its errors start with name (the
// file) and the line: `out/diagnostics.csv:4: min "x" is not a number`.
//
// A restarted run appends rows from its checkpoint's step on, after the
// rows the stopped run wrote past that checkpoint: a row of a step at or
// before the previous row's replaces the rows from its step on, so the rows
// come back in step order, as the continued run went. Non-finite values (a
// diverged run) are kept; the plots leave them out.
func Parse(r io.Reader, name string) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // a ragged row gets its own message
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty: want the header %s", name, strings.Join(Header, ","))
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	if !slices.Equal(head, Header) {
		return nil, fmt.Errorf("%s:1: header %q is not diagnostics.csv's %q", name, strings.Join(head, ","), strings.Join(Header, ","))
	}
	var rows []Row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(Header) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d (%s)", name, line, len(rec), len(Header), strings.Join(Header, ","))
		}
		step, err := strconv.Atoi(strings.TrimSpace(rec[0]))
		if err != nil || step < 0 {
			return nil, fmt.Errorf("%s:%d: step %q is not a step number", name, line, rec[0])
		}
		var v [6]float64
		for i := range v {
			x, err := strconv.ParseFloat(strings.TrimSpace(rec[i+1]), 64)
			// Out of range parses as ±Inf or 0, which a plot can skip.
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return nil, fmt.Errorf("%s:%d: %s %q is not a number", name, line, Header[i+1], rec[i+1])
			}
			v[i] = x
		}
		k := len(rows)
		for k > 0 && rows[k-1].Step >= step {
			k--
		}
		rows = append(rows[:k], Row{Step: step, Time: v[0], Min: v[1], Max: v[2], Mean: v[3], Total: v[4], Residual: v[5]})
	}
}

// csvError is a CSV syntax error with the file and line.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}
