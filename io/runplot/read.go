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
	// A heat run's flow columns after those (FlowColumns): the heat
	// flowing in, by the names of their columns less "q_" (x_lo, …, held,
	// source); nil without them.
	Q map[string]float64
	// DT and Estimate are the step that ended at the row and its error
	// estimate (of the tolerance) where the steps choose themselves
	// (StepColumns, last); 0 without them.
	DT, Estimate float64
}

// StepColumns are the last columns of diagnostics.csv where the steps
// choose themselves (equation.dt = "auto"): the last step kept and its
// error estimate, as a share of the tolerance.
var StepColumns = []string{"dt", "error_estimate"}

// FlowColumns are the columns a heat run's diagnostics.csv has after
// Header, for a grid of nd axes: each face's heat flow in (k∂u/∂n over the
// face), the held cells' and the source's power.
func FlowColumns(nd int) []string {
	var cols []string
	for _, ax := range []string{"z", "y", "x"}[3-nd:] {
		cols = append(cols, "q_"+ax+"_lo", "q_"+ax+"_hi")
	}
	return append(cols, "q_held", "q_source")
}

// flowHeader reports whether head is Header followed by FlowColumns (and
// StepColumns, when steps is set).
func flowHeader(head []string, steps bool) bool {
	for nd := 2; nd <= 3; nd++ {
		want := append(slices.Clone(Header), FlowColumns(nd)...)
		if steps {
			want = append(want, StepColumns...)
		}
		if slices.Equal(head, want) {
			return true
		}
	}
	return false
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
	var rows []Row
	var cols []string
	steps := false
	err := readRecords(r, name, strings.Join(Header, ","), func(head []string) error {
		steps = len(head) >= len(StepColumns) && slices.Equal(head[len(head)-len(StepColumns):], StepColumns)
		plain := head
		if steps {
			plain = head[:len(head)-len(StepColumns)]
		}
		if !slices.Equal(plain, Header) && !flowHeader(head, steps) {
			return fmt.Errorf("%s:1: header %q is not diagnostics.csv's %q (a heat run's: and %s; where the steps choose themselves: and %s)", name, strings.Join(head, ","),
				strings.Join(Header, ","), strings.Join(FlowColumns(2), ","), strings.Join(StepColumns, ","))
		}
		cols = head
		return nil
	}, func(step int, v []float64) {
		row := Row{Step: step, Time: v[0], Min: v[1], Max: v[2], Mean: v[3], Total: v[4], Residual: v[5]}
		if steps {
			n := len(v)
			row.DT, row.Estimate = v[n-2], v[n-1]
			v = v[:n-2]
		}
		if len(v) > len(Header)-1 {
			row.Q = map[string]float64{}
			for i, c := range cols[len(Header) : len(Header)+len(v)-(len(Header)-1)] {
				row.Q[strings.TrimPrefix(c, "q_")] = v[len(Header)-1+i]
			}
		}
		rows = inStepOrder(rows, row, func(r Row) int { return r.Step })
	})
	return rows, err
}

// readRecords reads from r a CSV of a header, which head vets, and rows of
// a step and numbers, each handed to add in turn (parseRecord). want is
// the header named when the file is empty. Errors start with name (the
// file) and the line.
func readRecords(r io.Reader, name, want string, head func([]string) error, add func(step int, nums []float64)) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // a ragged row gets its own message
	h, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: empty: want the header %s", name, want)
	}
	if err != nil {
		return csvError(name, err)
	}
	if err := head(h); err != nil {
		return err
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		step, nums, err := parseRecord(name, line, h, rec)
		if err != nil {
			return err
		}
		add(step, nums)
	}
}

// parseRecord reads a row rec of a CSV with header head whose first field
// is the step and the others numbers (out of range: ±Inf or 0, which a
// plot can skip). Its errors name the file, the line and the column.
func parseRecord(name string, line int, head, rec []string) (step int, nums []float64, err error) {
	if len(rec) != len(head) {
		return 0, nil, fmt.Errorf("%s:%d: %d fields, want %d (%s)", name, line, len(rec), len(head), strings.Join(head, ","))
	}
	step, err = strconv.Atoi(strings.TrimSpace(rec[0]))
	if err != nil || step < 0 {
		return 0, nil, fmt.Errorf("%s:%d: step %q is not a step number", name, line, rec[0])
	}
	nums = make([]float64, len(rec)-1)
	for i, s := range rec[1:] {
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, nil, fmt.Errorf("%s:%d: %s %q is not a number", name, line, head[i+1], s)
		}
		nums[i] = x
	}
	return step, nums, nil
}

// inStepOrder appends r to rows, in place of the rows from its step on: a
// restart's rows replace those the stopped run wrote past its checkpoint.
func inStepOrder[T any](rows []T, r T, step func(T) int) []T {
	k := len(rows)
	for k > 0 && step(rows[k-1]) >= step(r) {
		k--
	}
	return append(rows[:k], r)
}

// csvError is a CSV syntax error with the file and line.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", name, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", name, err)
}
