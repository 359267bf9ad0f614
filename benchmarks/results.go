package benchmarks

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"heat/decomp"
	"heat/internal/atomicfile"
)

// WriteResults writes a study into dir: runs.csv and runs.json (every run,
// with its whole report), points.csv and summary.md (one row per point),
// model.csv (the predictions) and the plots.
func WriteResults(dir string, st *Study) error {
	if err := writeRuns(dir, st); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "points.csv"), func(w io.Writer) error { return writePointsCSV(w, st) }); err != nil {
		return err
	}
	if st.Model != nil {
		if err := writeFile(filepath.Join(dir, "model.csv"), func(w io.Writer) error { return writeModelCSV(w, st) }); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(dir, "summary.md"), func(w io.Writer) error { return WriteSummary(w, st) }); err != nil {
		return err
	}
	return WritePlots(dir, st)
}

// writeRuns writes runs.csv and runs.json: all that a failed study still
// leaves.
func writeRuns(dir string, st *Study) error {
	if err := writeFile(filepath.Join(dir, "runs.csv"), func(w io.Writer) error { return writeRunsCSV(w, st.Runs) }); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "runs.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	})
}

func writeFile(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// num writes a float for CSV: 8 significant digits.
func num(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }

// optNum writes a float for CSV, or nothing for NaN (not known).
func optNum(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return num(x)
}

// optBool writes a flag for CSV, or nothing when the figure it rests on is
// NaN (not known).
func optBool(flag bool, of float64) string {
	if math.IsNaN(of) {
		return ""
	}
	return strconv.FormatBool(flag)
}

func itoa[T int | int64](x T) string { return strconv.FormatInt(int64(x), 10) }

var breakdownColumns = []string{"compute_s", "halo_wait_s", "reduce_s", "checkpoint_s", "output_s", "other_s"}

func (b Breakdown) fields() []string {
	return []string{num(b.Compute), num(b.HaloWait), num(b.Reduce), num(b.Checkpoint), num(b.Output), num(b.Other)}
}

func prefixed(prefix string, cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = prefix + c
	}
	return out
}

func writeRunsCSV(w io.Writer, runs []RunResult) error {
	cw := csv.NewWriter(w)
	head := []string{"point", "ranks", "threads", "cores", "rep", "shape", "dims", "cells", "steps", "wall_s", "step_s",
		"mupdates_per_s", "report_mupdates_per_s", "slowest_rank", "slowest_cells", "imbalance", "slowest_excess_pct"}
	head = append(head, prefixed("slowest_", breakdownColumns)...)
	head = append(head, prefixed("mean_", breakdownColumns)...)
	head = append(head, "messages", "bytes", "collectives", "messages_per_step", "bytes_per_step", "collectives_per_step",
		"checkpoint_bytes", "checkpoint_write_s", "hosts", "sha256", "dir")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range runs {
		m := r.Metrics
		row := []string{itoa(r.Point), itoa(r.Ranks), itoa(r.Threads), itoa(r.Cores()), itoa(r.Rep),
			decomp.FormatDims(m.Shape), decomp.FormatDims(m.Dims), itoa(m.Cells), itoa(m.Steps), num(m.WallS), num(m.StepS),
			num(m.MUpdatesS), num(m.ReportMUpdatesS), itoa(m.Slowest), itoa(m.SlowestCells), num(m.Imbalance), num(m.SlowestExcessPct)}
		row = append(row, m.SlowestTime.fields()...)
		row = append(row, m.MeanTime.fields()...)
		row = append(row, itoa(m.Messages), itoa(m.Bytes), itoa(m.Collectives), num(m.MessagesPerStep), num(m.BytesPerStep),
			num(m.CollectivesPerStep), itoa(m.CheckpointBytes), num(m.CheckpointWriteS), strings.Join(m.Hosts, ";"), m.SHA256, r.Dir)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// pct is a point's breakdown (the median run's mean over ranks) in % of
// its wall time.
func (p PointSummary) pct() Breakdown { return p.Rep.MeanTime.scale(100 / p.Rep.WallS) }

func writePointsCSV(w io.Writer, st *Study) error {
	cw := csv.NewWriter(w)
	head := []string{"point", "ranks", "threads", "cores", "shape", "dims", "reps", "step_median_s", "step_min_s", "step_max_s",
		"mupdates_per_s", "speedup", "efficiency", "compute_pct", "halo_wait_pct", "reduce_pct", "io_pct", "other_pct"}
	head = append(head, prefixed("slowest_step_", breakdownColumns)...)
	head = append(head, prefixed("mean_step_", breakdownColumns)...)
	head = append(head, "messages_per_step", "bytes_per_step", "collectives_per_step", "imbalance", "slowest_rank",
		"slowest_excess_pct", "median_rep", "spread", "noisy", "model_s", "model_err", "model_miss")
	if err := cw.Write(head); err != nil {
		return err
	}
	checks := st.Checks()
	for i, p := range st.Points {
		c := checks[i]
		m, pc := p.Rep, p.pct()
		perStep := 1 / float64(m.Steps)
		row := []string{itoa(p.Point), itoa(p.Ranks), itoa(p.Threads), itoa(p.Cores), decomp.FormatDims(m.Shape),
			decomp.FormatDims(m.Dims), itoa(p.Reps), num(p.StepMedianS), num(p.StepMinS), num(p.StepMaxS), num(p.MUpdatesS),
			num(p.Speedup), num(p.Efficiency), num(pc.Compute), num(pc.HaloWait), num(pc.Reduce), num(pc.IO()), num(pc.Other)}
		row = append(row, m.SlowestTime.scale(perStep).fields()...)
		row = append(row, m.MeanTime.scale(perStep).fields()...)
		row = append(row, num(m.MessagesPerStep), num(m.BytesPerStep), num(m.CollectivesPerStep), num(m.Imbalance),
			itoa(m.Slowest), num(m.SlowestExcessPct), itoa(p.RepIndex), optNum(c.Spread), optBool(c.Noisy, c.Spread),
			optNum(c.ModelS), optNum(c.ModelErr), optBool(c.ModelMiss, c.ModelErr))
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeModelCSV(w io.Writer, st *Study) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"network", "alpha_s", "beta_s_per_byte", "ranks", "cores", "shape", "dims", "box_cells",
		"faces", "face_bytes", "compute_s", "halo_s", "collectives_s", "step_s", "speedup", "efficiency", "extrapolated"}); err != nil {
		return err
	}
	series := []struct {
		name string
		net  Network
		ps   []Prediction
	}{{"measured", st.Model.Network, st.Predicted}}
	if st.Target != nil {
		series = append(series, struct {
			name string
			net  Network
			ps   []Prediction
		}{"target", *st.Target, st.TargetPredicted})
	}
	most := st.measuredRanks()
	for _, s := range series {
		for _, p := range s.ps {
			if err := cw.Write([]string{s.name, num(s.net.Alpha), num(s.net.Beta), itoa(p.Ranks), itoa(p.Cores),
				decomp.FormatDims(p.Shape), decomp.FormatDims(p.Dims), itoa(p.BoxCells), itoa(p.Faces), itoa(p.FaceBytes),
				num(p.ComputeS), num(p.HaloS), num(p.CollectS), num(p.StepS), num(p.Speedup), num(p.Efficiency), strconv.FormatBool(p.Ranks > most)}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
