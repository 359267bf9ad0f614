package run

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/BurntSushi/toml"

	"heat/decomp"
	"heat/internal/exactsum"
	"heat/io/config"
	"heat/io/media"
	"heat/operator"
	"heat/plan"
	"heat/solver"
)

// errDryRun ends a --dry-run after its printout: a success.
var errDryRun = errors.New("dry run")

// dryRun prints what a run would do as one TOML document, so that
// `heat run --dry-run > x.toml` saves a config that runs: the resolved
// config first, then, as comments after the line that starts
// "# ---- heat run --dry-run", the problem, the split, the memory it needs
// against the memory there, and the outputs.
func dryRun(w io.Writer, cfg *config.Config, spec solver.Spec, g *decomp.Grid, mem memory, avail int64, availWhat string) error {
	var doc bytes.Buffer
	fmt.Fprintf(&doc, "# heat run --dry-run: the resolved config (heat run -c this-file runs it),\n# then what the run would do. Nothing is run.\n\n")
	enc := toml.NewEncoder(&doc)
	enc.Indent = ""
	if err := enc.Encode(cfg); err != nil {
		return err
	}
	var sum strings.Builder
	summary(&sum, cfg, spec, g, mem, avail, availWhat)
	fmt.Fprintf(&doc, "\n# ---- heat run --dry-run: nothing is run ----\n")
	for _, line := range strings.Split(strings.TrimSuffix(sum.String(), "\n"), "\n") {
		fmt.Fprintf(&doc, "# %s\n", line)
	}
	_, err := w.Write(doc.Bytes())
	return err
}

// summary writes the problem, the split, the memory and the outputs of a
// dry run.
func summary(w io.Writer, cfg *config.Config, spec solver.Spec, g *decomp.Grid, mem memory, avail int64, availWhat string) {
	how := fmt.Sprintf("%d %s steps, dt = %g", cfg.Run.Steps, cfg.Equation.Scheme, spec.DT)
	switch {
	case spec.Adaptive != nil:
		a := spec.Adaptive
		first := "the field's rate at the start"
		if a.DTInitial > 0 {
			first = fmt.Sprintf("%.6g", a.DTInitial)
		}
		how = fmt.Sprintf("%s steps chosen by their error to run.t_end = %g (rtol %g, atol %g; dt from %s within [%.6g, %.6g]), landing on %d event(s)",
			cfg.Equation.Scheme, cfg.Run.TEnd, a.RTol, a.ATol, first, a.DTMin, a.DTMax, len(a.Events))
		if cfg.Run.Steps < config.MaxAdaptiveSteps {
			how += fmt.Sprintf(", at most %d steps (run.steps)", cfg.Run.Steps)
		}
	case autoStep(cfg, spec) && cfg.Run.TEnd > 0:
		how = fmt.Sprintf("%s steps to run.t_end = %g, dt = %g× the media's stability limit (min over cells of ρc/Σ k_f/h², found from the cells at the start)",
			cfg.Equation.Scheme, cfg.Run.TEnd, operator.SafetyFactor)
	case autoStep(cfg, spec):
		how = fmt.Sprintf("%d %s steps, dt = %g× the media's stability limit (min over cells of ρc/Σ k_f/h², found from the cells at the start)",
			cfg.Run.Steps, cfg.Equation.Scheme, operator.SafetyFactor)
	case cfg.Equation.Kind == config.Poisson:
		how = fmt.Sprintf("%s, at most %d iterations, run.tolerance %g", method(cfg), cfg.Run.Steps, cfg.Run.Tolerance)
	case cfg.EndsAtTEnd():
		how += fmt.Sprintf(", to run.t_end = %g (the last step %.6g)", cfg.Run.TEnd, spec.LastDT())
	case cfg.Run.TEnd > 0:
		how += fmt.Sprintf(", to t = %g: run.steps comes before run.t_end = %g", float64(cfg.Run.Steps)*spec.DT, cfg.Run.TEnd)
	}
	if cfg.Implicit() {
		how += ", each step solved by " + method(cfg)
	}
	fmt.Fprintf(w, "problem      %s %s: %s\n", cfg.Equation.Kind, decomp.FormatDims(cfg.Grid.Shape), how)
	fmt.Fprintf(w, "split        %d rank(s) as %s, %d thread(s) each\n", g.Size(), decomp.FormatDims(g.Dims), spec.Threads)
	for r := range min(g.Size(), 8) {
		b := g.Box(r)
		fmt.Fprintf(w, "  rank %-5d coords %v, cells %v from %v\n", r, g.Coords(r), b.Shape(), b.Lo)
	}
	if g.Size() > 8 {
		fmt.Fprintf(w, "  … and %d more ranks\n", g.Size()-8)
	}
	fmt.Fprintf(w, "memory       %s per process\n", mem)
	if spec.Media != nil {
		fmt.Fprintf(w, "media        %d B per cell beside the fields (k, ρc, held values, masks, faces per axis, the kernels' coefficients)\n",
			operator.BytesPerCell(len(cfg.Grid.Shape), cfg.UsesMultigrid()))
	}
	if avail > 0 {
		fmt.Fprintf(w, "available    %s (%s)\n", bytesText(avail), availWhat)
	}
	materials(w, cfg)
	sources(w, cfg, spec)
	var maps []string
	for _, m := range []struct{ key, path string }{{"maps.k", cfg.Maps.K}, {"maps.rho_c", cfg.Maps.RhoC}} {
		if m.path != "" {
			maps = append(maps, m.key+" = "+m.path)
		}
	}
	if len(maps) > 0 {
		// A dry run reads no map's values: a map is as large as the grid.
		fmt.Fprintf(w, "maps         %s: shape and data type checked; the values are checked when the run starts\n", strings.Join(maps, ", "))
	}
	fmt.Fprintf(w, "outputs      %s (report.json", cfg.Output.Dir)
	if cfg.Output.DiagnosticsEvery > 0 {
		fmt.Fprintf(w, ", diagnostics.csv every %d", cfg.Output.DiagnosticsEvery)
	}
	if n := len(cfg.Output.Probe); n > 0 {
		fmt.Fprintf(w, ", %s of %d probe(s) every %d", ProbesFile, n, cfg.Output.ProbeEvery)
	}
	if len(cfg.Output.Formats) > 0 {
		fmt.Fprintf(w, ", snapshots %s", strings.Join(cfg.Output.Formats, "+"))
	}
	fmt.Fprintln(w, ")")
	if cfg.Checkpoint.Every > 0 || cfg.Checkpoint.Final {
		fmt.Fprintf(w, "checkpoints  %s, every %d steps, final %v, keep %d\n", cfg.Checkpoint.Dir, cfg.Checkpoint.Every, cfg.Checkpoint.Final, cfg.Checkpoint.Keep)
	}
}

// method is what solves the run, as the plan decides it, and why where it
// is not what equation.solver names.
func method(cfg *config.Config) string {
	p, _ := plan.Decide(cfg.Case())
	m := p.Method.String()
	switch {
	case p.Method == plan.MGCG && cfg.Equation.Solver != "mgcg":
		m += fmt.Sprintf(" (equation.solver = %q: in heterogeneous media full multigrid's solve goes on by mgcg)", cfg.Equation.Solver)
	case p.KrylovOnStall:
		m += fmt.Sprintf(" cycles, each solve handing over to mgcg where its cycles reduce the backward error less than %gx a cycle (heterogeneous media)", 1/plan.StallFactor)
	}
	if p.Method == plan.MGCG && cfg.Equation.Kind == config.Poisson && cfg.Multigrid.Cycle == "fmg" {
		m = "one full-multigrid cycle, then " + m
	}
	return m
}

// materials prints, per [[material]], the cells its region holds, those
// still its own under the materials after it and their extent: a thin
// layer that came out as one cell, or a material wholly covered by later
// ones, shows here before the run.
func materials(w io.Writer, cfg *config.Config) {
	spec := cfg.Media()
	if len(spec.Materials) == 0 {
		return
	}
	cov, ok := spec.Coverage()
	if !ok {
		fmt.Fprintf(w, "materials    %d, not counted on a grid of more than %d cells\n", len(spec.Materials), media.MaxCoverageCells)
		return
	}
	nd := len(cfg.Grid.Shape)
	for i, c := range cov {
		name := fmt.Sprintf("material[%d]", i)
		if n := spec.Materials[i].Name; n != "" {
			name += " " + n
		}
		line := fmt.Sprintf("%s: %d cells", name, c.Owned)
		if c.Owned != c.Region {
			line += fmt.Sprintf(" (of the %d its region holds; the rest under later materials)", c.Region)
		}
		if c.Lo != nil {
			var ext []string
			for a := range nd {
				ext = append(ext, fmt.Sprintf("%s %.4g–%.4g", decomp.AxisName(nd, a), c.Lo[a], c.Hi[a]))
			}
			line += ", " + strings.Join(ext, ", ")
		} else {
			line += ": every cell of its region lies under later materials, so it sets nothing"
		}
		label := "materials   "
		if i > 0 {
			label = "            "
		}
		fmt.Fprintf(w, "%s %s\n", label, line)
	}
}

// sources prints where the source puts heat in as the grid resolves it:
// the cells where f ≠ 0, their extent and Σ f·V — at t = 0, or for a
// source that reads t and is nowhere on at the start, at the run's end —
// so a heater that fell between cell centres shows before the run. A
// source from a file is read when the run starts.
func sources(w io.Writer, cfg *config.Config, spec solver.Spec) {
	src := cfg.Source
	switch {
	case src.Kind == "none":
		return
	case src.Kind == "file":
		fmt.Fprintf(w, "source       file %s: its values are read when the run starts\n", src.Path)
		return
	}
	g := cfg.Grid.Geometry()
	cells := g.Cells()
	if cells > media.MaxCoverageCells {
		fmt.Fprintf(w, "source       %s, not counted on a grid of more than %d cells\n", src.Kind, media.MaxCoverageCells)
		return
	}
	at := func(t float64) solver.Profile {
		if spec.SourceAt != nil {
			return spec.SourceAt(t)
		}
		return spec.Source
	}
	nd := len(g.Shape)
	count := func(p solver.Profile) (n int, lo, hi []float64, power float64) {
		lo, hi = make([]float64, nd), make([]float64, nd)
		for a := range nd {
			lo[a], hi[a] = math.Inf(1), math.Inf(-1)
		}
		idx, x := make([]int, nd), make([]float64, nd)
		var acc exactsum.Acc
		for c := range cells {
			g.Cell(c, idx)
			g.CentreOf(idx, x)
			v := p(x, idx)
			if v == 0 {
				continue
			}
			n++
			acc.Add(float64(v * g.CellVolume()))
			for a := range nd {
				lo[a] = min(lo[a], float64(idx[a])*g.H(a))
				hi[a] = max(hi[a], float64(idx[a]+1)*g.H(a))
			}
		}
		return n, lo, hi, acc.Float64()
	}
	t := 0.0
	n, lo, hi, power := count(at(0))
	if end := spec.DT * float64(cfg.Run.Steps); n == 0 && spec.SourceAt != nil && cfg.Equation.Kind == config.Heat {
		if cfg.EndsAtTEnd() {
			end = cfg.Run.TEnd
		}
		t = end
		n, lo, hi, power = count(at(t))
	}
	line := fmt.Sprintf("source       %s: %d cells where f ≠ 0", src.Kind, n)
	if spec.SourceAt != nil {
		line += fmt.Sprintf(" at t = %g", t)
	}
	if n == 0 {
		fmt.Fprintf(w, "%s: it puts nothing in\n", line)
		return
	}
	if n < cells {
		var ext []string
		for a := range nd {
			ext = append(ext, fmt.Sprintf("%s %.4g–%.4g", decomp.AxisName(nd, a), lo[a], hi[a]))
		}
		line += ", " + strings.Join(ext, ", ")
	}
	line += fmt.Sprintf(", Σ f·V = %.6g", power)
	if cfg.Source.Amplitude != nil {
		line += " (× source.amplitude in time)"
	}
	fmt.Fprintln(w, line)
}
