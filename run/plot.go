package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"heat/io/config"
	"heat/io/report"
	"heat/io/runplot"
)

// PlotOptions are heat plot's: the folder the plots go to ("" is
// <out>/plots).
type PlotOptions struct {
	Out string
}

// PlotsDir is the folder of a run's plots, under its output folder.
const PlotsDir = "plots"

// Plot draws the plots of the run whose output folder arg names from its
// diagnostics.csv and its probes.csv (either may be missing, not both), or
// of the one CSV arg names, knowing the run from the report.json beside
// it (without one, a run still going or killed, it draws the plots of
// both equations), and says what it wrote. A missing folder or file, or a
// malformed one, is a usage error naming it (and the line).
func Plot(arg string, o PlotOptions) (string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return "", Usagef("plot: %s: no such run output folder", arg)
	}
	dir, csvPath, probesPath := arg, filepath.Join(arg, "diagnostics.csv"), filepath.Join(arg, ProbesFile)
	if !st.IsDir() {
		dir, csvPath, probesPath = filepath.Dir(arg), arg, ""
		if filepath.Base(arg) == ProbesFile {
			csvPath, probesPath = "", arg
		}
	} else if !exists(probesPath) {
		probesPath = ""
	}
	var rows []runplot.Row
	if csvPath != "" {
		rows, err = runplot.Read(csvPath)
		switch {
		case errors.Is(err, fs.ErrNotExist) && probesPath != "":
			csvPath = "" // the probes alone
		case errors.Is(err, fs.ErrNotExist):
			return "", Usagef("plot: %s: no such file: the run wrote no diagnostics (output.diagnostics_every = 0?) and no probes", csvPath)
		case err != nil:
			return "", UsageError{fmt.Errorf("plot: %w", err)}
		case len(rows) == 0:
			return "", Usagef("plot: %s: no rows after the header: nothing to plot yet", csvPath)
		}
	}
	var probes *runplot.Probes
	if probesPath != "" {
		probes, err = runplot.ReadProbes(probesPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", Usagef("plot: %s: no such file", probesPath)
		case err != nil:
			return "", UsageError{fmt.Errorf("plot: %w", err)}
		case len(probes.Rows) == 0:
			return "", Usagef("plot: %s: no rows after the header: nothing to plot yet", probesPath)
		}
	}
	r, err := readRunReport(filepath.Join(dir, "report.json"))
	if err != nil {
		return "", UsageError{fmt.Errorf("plot: %w", err)}
	}
	if o.Out == "" {
		o.Out = filepath.Join(dir, PlotsDir)
	}
	var paths, what []string
	if csvPath != "" {
		drawn, err := runplot.Write(o.Out, rows, r)
		if err != nil {
			return "", fmt.Errorf("plot: %w", err)
		}
		paths = append(paths, drawn...)
		what = append(what, fmt.Sprintf("%d rows of %s (steps %d–%d)", len(rows), csvPath, rows[0].Step, rows[len(rows)-1].Step))
	}
	if probes != nil {
		path, err := runplot.WriteProbes(o.Out, probes, r)
		if err != nil {
			return "", fmt.Errorf("plot: %w", err)
		}
		paths = append(paths, path)
		pr := probes.Rows
		what = append(what, fmt.Sprintf("%d probes, %d rows of %s (steps %d–%d)", len(probes.Names), len(pr), probesPath, pr[0].Step, pr[len(pr)-1].Step))
	}
	if r.Equation == "" {
		what = append(what, "no report.json beside it, so the plots of both equations")
	}
	return strings.Join(paths, ", ") + ": " + strings.Join(what, "; "), nil
}

// readRunReport is what the plots need of the report at path; the zero Run
// when there is none.
func readRunReport(path string) (runplot.Run, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return runplot.Run{Label: config.Default().Output.Label}, nil
	}
	if err != nil {
		return runplot.Run{}, err
	}
	var rep struct {
		report.Report
		Config config.Config `json:"config"`
	}
	rep.Config.Output.Label = config.Default().Output.Label // a report from before output.label
	if err := json.Unmarshal(data, &rep); err != nil {
		return runplot.Run{}, fmt.Errorf("%s: not a run report: %v", path, err)
	}
	r := plotRun(rep.Config.Equation.Kind, &rep.Report)
	r.Label = plotLabel(rep.Config.Output.Label, rep.Config.Output.Units.Field)
	r.Media = rep.Config.Case().Media
	r.TimeUnit = rep.Config.Output.Units.Time
	r.ProbeTime, r.ProbeLog = rep.Config.Output.ProbeTime, rep.Config.Output.ProbeLog
	return r, nil
}

// plotRun is what the plots need of a run of the equation kind with report
// rep: the solver, and for Poisson its every-cycle residuals (where they
// are the whole run's, or of a restart all its own) and mean factor.
func plotRun(kind string, rep *report.Report) runplot.Run {
	r := runplot.Run{Equation: kind}
	sv := rep.Solver
	if sv == nil {
		return r
	}
	r.Solver = sv.Kind
	if kind != config.Poisson {
		return r
	}
	if f := sv.ConvergenceFactor; f != nil {
		r.Factor = float64(*f)
	}
	from := 0
	if rep.Restart != nil {
		from = rep.Restart.Step
	}
	if n := len(sv.ResidualHistory); n > 0 && n == rep.Steps-from {
		r.First = from
		for _, h := range sv.ResidualHistory {
			r.History = append(r.History, float64(h))
		}
	}
	return r
}

// plotsDue says whether a run draws its plots at its end: with snapshots on
// (output.snapshot_every > 0, output.formats not empty) and diagnostics.
func plotsDue(cfg *config.Config) bool {
	o := cfg.Output
	return o.SnapshotEvery > 0 && len(o.Formats) > 0 && o.DiagnosticsEvery > 0
}

// endPlots draws the plots of the run that has just written its report
// (rank 0), when due, and returns their paths. A failure is a warning: the
// run's results are written and its report says how it went.
func (j *job) endPlots() []string {
	probes := j.endProbePlot()
	if !plotsDue(j.cfg) {
		return probes
	}
	csvPath := filepath.Join(j.cfg.Output.Dir, "diagnostics.csv")
	rows, err := runplot.Read(csvPath)
	dir := filepath.Join(j.cfg.Output.Dir, PlotsDir)
	if err == nil {
		err = j.files.claimDir(dir)
	}
	for _, name := range plotFiles(j.cfg.Equation.Kind) {
		if err == nil {
			err = j.files.claim(filepath.Join(dir, name))
		}
	}
	if err == nil && len(rows) > 0 {
		var paths []string
		paths, err = runplot.Write(dir, rows, plotRun(j.cfg.Equation.Kind, j.rep))
		if err == nil {
			return append(paths, probes...)
		}
	}
	if err != nil {
		j.log.warn("plots of %s not drawn: %v", csvPath, err)
	}
	return probes
}

// endProbePlot draws the probes' plot of the run that has just written
// its report (rank 0) when due — with probes and snapshots on a schedule,
// as the other plots — and returns its path. A failure is a warning.
func (j *job) endProbePlot() []string {
	o := j.cfg.Output
	if !probesOn(j.cfg) || o.SnapshotEvery == 0 || len(o.Formats) == 0 {
		return nil
	}
	csvPath := filepath.Join(o.Dir, ProbesFile)
	dir := filepath.Join(o.Dir, PlotsDir)
	p, err := runplot.ReadProbes(csvPath)
	if err == nil {
		err = j.files.claimDir(dir)
	}
	if err == nil {
		err = j.files.claim(filepath.Join(dir, runplot.ProbeFile))
	}
	if err == nil && len(p.Rows) > 0 {
		r := plotRun(j.cfg.Equation.Kind, j.rep)
		r.Label, r.TimeUnit = plotLabel(o.Label, o.Units.Field), o.Units.Time
		r.ProbeTime, r.ProbeLog = o.ProbeTime, o.ProbeLog
		var path string
		if path, err = runplot.WriteProbes(dir, p, r); err == nil {
			return []string{path}
		}
	}
	if err != nil {
		j.log.warn("plot of %s not drawn: %v", csvPath, err)
	}
	return nil
}

// plotFiles are the plots endPlots draws for a run of equation kind.
func plotFiles(kind string) []string {
	if kind == config.Poisson {
		return []string{runplot.ResidualFile}
	}
	return []string{runplot.FieldFile, runplot.FlowFile}
}

// plotLabel is the field's name on the plots' axes: output.label with the
// field's unit, "" (unnamed) where the label is "".
func plotLabel(label, unit string) string {
	if label == "" {
		return ""
	}
	return fieldAxis(label, unit)
}
