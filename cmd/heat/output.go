package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"heat/comm"
	"heat/decomp"
	"heat/io/config"
	"heat/io/heatmap"
	"heat/io/vtk"
	"heat/solver"
)

// outputs are the files a run leaves to look at: snapshots (PNG heatmaps,
// VTK ImageData with a .pvd series) and diagnostics.csv. Writing them only
// reads the field, so it never changes the solution. One outputs serves
// every rank of the process; its methods are collective and rank 0 writes
// the shared files.
type outputs struct {
	cfg    *config.Config
	dir    string      // <out>/snapshots
	series *vtk.Series // rank 0
	diag   *csv.Writer // rank 0
	diagF  *os.File
}

// openOutputs prepares the snapshot directory and the diagnostics file on
// rank 0. A restarted run appends to both.
func openOutputs(cfg *config.Config, restarted bool) (*outputs, error) {
	o := &outputs{cfg: cfg, dir: filepath.Join(cfg.Output.Dir, "snapshots")}
	if len(cfg.Output.Formats) > 0 {
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create snapshot directory %q: %w", o.dir, err)
		}
	}
	if has(cfg.Output.Formats, "vti") {
		pvd := filepath.Join(o.dir, "u.pvd")
		if restarted {
			s, err := vtk.OpenSeries(pvd)
			if err != nil {
				return nil, err
			}
			o.series = s
		} else {
			o.series = vtk.NewSeries(pvd)
		}
	}
	if cfg.Output.DiagnosticsEvery > 0 {
		path := filepath.Join(cfg.Output.Dir, "diagnostics.csv")
		flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		if restarted {
			flag = os.O_CREATE | os.O_WRONLY | os.O_APPEND
		}
		st, statErr := os.Stat(path)
		f, err := os.OpenFile(path, flag, 0o644)
		if err != nil {
			return nil, fmt.Errorf("cannot write diagnostics: %w", err)
		}
		o.diagF, o.diag = f, csv.NewWriter(f)
		if !restarted || errors.Is(statErr, fs.ErrNotExist) || (statErr == nil && st.Size() == 0) {
			o.diag.Write([]string{"step", "time", "min", "max", "mean", "total", "residual"})
			o.diag.Flush()
		}
	}
	return o, nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// close flushes the diagnostics (rank 0).
func (o *outputs) close() error {
	if o.diagF == nil {
		return nil
	}
	o.diag.Flush()
	if err := o.diag.Error(); err != nil {
		o.diagF.Close()
		return fmt.Errorf("diagnostics: %w", err)
	}
	return o.diagF.Close()
}

// diagnostics appends one row: step, time, min, max, mean, total heat
// (∫u dV) and the residual of the last check. Collective.
func (o *outputs) diagnostics(c comm.Comm, s *solver.Solver) error {
	lay := s.Layout()
	u := s.Field()
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	lay.ForRows(decomp.Box{Lo: make([]int, len(lay.N)), Hi: lay.N}, func(start, n int) {
		for _, x := range u[start : start+n] {
			lo, hi = min(lo, x), max(hi, x)
			sum += x
		}
	})
	var mx, sm [2]float64
	if err := c.Allreduce(comm.Max, []float64{hi, -lo}, mx[:]); err != nil {
		return err
	}
	if err := c.Allreduce(comm.Sum, []float64{sum, 0}, sm[:]); err != nil {
		return err
	}
	if c.Rank() != 0 {
		return nil
	}
	cells, vol := 1, 1.0
	for a, n := range o.cfg.Grid.Shape {
		cells *= n
		vol *= o.cfg.Grid.Length[a] / float64(n)
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 17, 64) }
	o.diag.Write([]string{strconv.Itoa(s.Step()), f(s.SimTime()), f(-mx[1]), f(mx[0]), f(sm[0] / float64(cells)), f(sm[0] * vol), f(s.Residual())})
	o.diag.Flush()
	return o.diag.Error()
}

// snapshot writes the field in every configured format. Collective: the
// PNG needs the field on rank 0; each rank writes its own .vti piece.
func (o *outputs) snapshot(c comm.Comm, s *solver.Solver) error {
	if len(o.cfg.Output.Formats) == 0 {
		return nil
	}
	name := fmt.Sprintf("u-%08d", s.Step())
	if has(o.cfg.Output.Formats, "png") {
		if err := o.png(c, s, filepath.Join(o.dir, name+".png")); err != nil {
			return err
		}
	}
	if has(o.cfg.Output.Formats, "vti") {
		if err := o.vti(c, s, name); err != nil {
			return err
		}
	}
	return nil
}

func (o *outputs) png(c comm.Comm, s *solver.Solver, path string) error {
	field, err := s.Gather()
	if err != nil || c.Rank() != 0 {
		return err
	}
	plane, ny, nx, label, err := heatmap.Slice(field, o.cfg.Grid.Shape, o.cfg.Output.Slice)
	if err != nil {
		return err
	}
	title := fmt.Sprintf("step %d  t = %.4g", s.Step(), s.SimTime())
	if o.cfg.Equation.Kind == "poisson" {
		title = fmt.Sprintf("iteration %d  residual %.3g", s.Step(), s.Residual())
	}
	if label != "" {
		title += "  " + label
	}
	opt := heatmap.Options{Cmap: o.cfg.Output.Cmap, MaxPixels: o.cfg.Output.ImageSize, Title: title}
	if r := o.cfg.Output.Range; len(r) == 2 {
		opt.Min, opt.Max, opt.Fixed = r[0], r[1], true
	}
	return heatmap.Write(path, plane, ny, nx, opt)
}

func (o *outputs) vti(c comm.Comm, s *solver.Solver, name string) error {
	g := vtk.Grid{Shape: o.cfg.Grid.Shape, Spacing: make([]float64, len(o.cfg.Grid.Shape))}
	for a, n := range o.cfg.Grid.Shape {
		g.Spacing[a] = o.cfg.Grid.Length[a] / float64(n)
	}
	opt := vtk.Options{Float32: o.cfg.Output.VTKFloat32, Compress: o.cfg.Output.VTKCompress}
	lay := s.Layout()
	box := lay.Box
	local := make([]float64, 0, box.Size())
	u := s.Field()
	lay.ForRows(decomp.Box{Lo: make([]int, len(lay.N)), Hi: lay.N}, func(start, n int) {
		local = append(local, u[start:start+n]...)
	})
	file := name + ".vti"
	var err error
	if c.Size() == 1 {
		err = vtk.WriteVTI(filepath.Join(o.dir, file), g, box.Lo, box.Hi, local, opt)
	} else {
		pieceDir := filepath.Join(o.dir, name)
		if err = os.MkdirAll(pieceDir, 0o755); err == nil {
			err = vtk.WriteVTI(filepath.Join(pieceDir, fmt.Sprintf("piece-%04d.vti", c.Rank())), g, box.Lo, box.Hi, local, opt)
		}
	}
	// Every rank's piece must be on disk before rank 0 lists them.
	failed := 0.0
	if err != nil {
		failed = 1
	}
	var any [1]float64
	if rerr := c.Allreduce(comm.Max, []float64{failed}, any[:]); rerr != nil {
		return rerr
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", name, err)
	}
	if any[0] != 0 {
		return fmt.Errorf("snapshot %s: another rank failed to write its piece", name)
	}
	if c.Rank() != 0 {
		return nil
	}
	if c.Size() > 1 {
		grid := s.Grid()
		pieces := make([]vtk.Piece, c.Size())
		for r := range pieces {
			b := grid.Box(r)
			pieces[r] = vtk.Piece{Lo: b.Lo, Hi: b.Hi, Source: filepath.Join(o.dir, name, fmt.Sprintf("piece-%04d.vti", r))}
		}
		file = name + ".pvti"
		if err := vtk.WritePVTI(filepath.Join(o.dir, file), g, pieces, opt); err != nil {
			return err
		}
	}
	t := s.SimTime()
	if o.cfg.Equation.Kind == "poisson" {
		t = float64(s.Step())
	}
	return o.series.Add(t, file)
}
