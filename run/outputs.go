package run

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"heat/comm"
	"heat/decomp"
	"heat/field"
	"heat/internal/hugemem"
	"heat/internal/safefile"
	"heat/io/config"
	"heat/io/heatmap"
	"heat/io/runplot"
	"heat/io/vtk"
	"heat/operator"
	"heat/solver"
)

// outputs are the files a run leaves to look at: snapshots (field images
// with their planes' values, VTK ImageData with a .pvd series) and
// diagnostics.csv. Writing them only reads the field, so it never changes
// the solution. One outputs serves every rank of the process; its methods
// are collective and rank 0 writes the shared files.
type outputs struct {
	cfg    *config.Config
	files  *manifest   // what the run may write (claim) and wrote
	dir    string      // <out>/snapshots
	series *vtk.Series // rank 0
	diag   *csv.Writer // rank 0
	diagF  *os.File
	bufs   []planeBufs // per rank
	// probe is probes.csv (rank 0; nil without probes), probers each
	// rank's sampling of the probes, made at its first row.
	probe   *probeOut
	probers []*solver.Probes
	// pngDone delivers the result of the PNG being drawn and encoded in the
	// background on rank 0 (nil when none is): the solver goes on meanwhile.
	pngDone chan error
	// regions are the snapshots' material outlines (planeRegions), found
	// at the first snapshot; regionsSet says they were.
	regions    []int32
	regionsSet bool
}

// openOutputs prepares the snapshot directory and the diagnostics file on
// rank 0. A restarted run appends to both.
//
// Under MPI every process opens its outputs, and only rank 0 (rank0) holds
// the shared files.
func openOutputs(cfg *config.Config, files *manifest, restarted, rank0 bool) (*outputs, error) {
	o := &outputs{cfg: cfg, files: files, dir: filepath.Join(cfg.Output.Dir, "snapshots"), bufs: make([]planeBufs, cfg.Parallel.Ranks),
		probers: make([]*solver.Probes, cfg.Parallel.Ranks)}
	if len(cfg.Output.Formats) > 0 {
		if err := files.claimDir(o.dir); err != nil {
			return nil, UsageError{fmt.Errorf("cannot create snapshot directory %q: %w", o.dir, err)}
		}
	}
	if !rank0 {
		return o, nil
	}
	if slices.Contains(cfg.Output.Formats, "vti") {
		pvd := filepath.Join(o.dir, "u.pvd")
		if err := files.claim(pvd); err != nil {
			return nil, UsageError{err}
		}
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
		st, statErr := os.Lstat(path)
		f, err := os.OpenFile(path, flag|safefile.NoFollow, 0o644)
		if err != nil {
			return nil, fmt.Errorf("cannot write diagnostics: %w", err)
		}
		o.diagF, o.diag = f, csv.NewWriter(f)
		if !restarted || errors.Is(statErr, fs.ErrNotExist) || (statErr == nil && st.Size() == 0) {
			head := slices.Clone(runplot.Header)
			if flowsKept(cfg) {
				head = append(head, runplot.FlowColumns(cfg.NDim())...)
			}
			if cfg.Adaptive() {
				head = append(head, runplot.StepColumns...)
			}
			o.diag.Write(head)
			o.diag.Flush()
		}
	}
	if probesOn(cfg) {
		p, err := openProbes(cfg, restarted)
		if err != nil {
			if o.diagF != nil {
				o.diagF.Close()
			}
			return nil, err
		}
		o.probe = p
	}
	return o, nil
}

// flowsKept reports whether the solver keeps an energy account (a heat run
// stepping one step at a time), whose flows diagnostics.csv then lists.
func flowsKept(cfg *config.Config) bool {
	return cfg.Equation.Kind == config.Heat && cfg.Grid.Ghost == 1
}

// waitPNG waits for the PNG being written in the background, if any.
func (o *outputs) waitPNG() error {
	if o.pngDone == nil {
		return nil
	}
	err := <-o.pngDone
	o.pngDone = nil
	return err
}

// close waits for the last PNG and flushes the diagnostics and the
// probes (rank 0).
func (o *outputs) close() error {
	if err := o.probe.close(); err != nil {
		o.waitPNG()
		if o.diagF != nil {
			o.diagF.Close()
		}
		return err
	}
	if err := o.waitPNG(); err != nil {
		if o.diagF != nil {
			o.diagF.Close()
		}
		return err
	}
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
// (∫u dV) and the residual of the last check; a heat run's then the heat
// flowing in now through each face, from held cells and from the source
// (runplot.FlowColumns: boundary cells only, no pass over the field).
// Collective.
func (o *outputs) diagnostics(c comm.Comm, s *solver.Solver) error {
	st, err := fieldStats(c, s)
	if err != nil {
		return err
	}
	var flows []float64 // faces, held, source
	if flowsKept(o.cfg) {
		faces, held, source, err := s.Rates()
		if err != nil {
			return err
		}
		flows = append(faces, held, source)
	}
	if c.Rank() != 0 {
		return nil
	}
	vol := o.cfg.Grid.Geometry().CellVolume()
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 17, 64) }
	row := []string{strconv.Itoa(s.Step()), f(s.SimTime()), f(st.Min), f(st.Max), f(st.Sum / float64(st.N)), f(st.Sum * vol), f(s.Residual())}
	for _, x := range flows {
		row = append(row, f(x))
	}
	if o.cfg.Adaptive() {
		dt, est := s.LastStep()
		row = append(row, f(dt), f(est))
	}
	o.diag.Write(row)
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
	if slices.Contains(o.cfg.Output.Formats, "png") {
		if err := o.png(c, s, name); err != nil {
			return err
		}
	}
	if slices.Contains(o.cfg.Output.Formats, "vti") {
		if err := o.vti(c, s, name); err != nil {
			return err
		}
	}
	return nil
}

// png draws the field image of a snapshot (output.image_format: PNG, SVG
// or PDF) and keeps the plane it drew beside it (snapshotPlane). Averaging
// the plane is collective; drawing and writing go on in the background on
// rank 0 while the solver continues.
func (o *outputs) png(c comm.Comm, s *solver.Solver, name string) error {
	if c.Rank() == 0 {
		// The previous picture must be done with the plane buffer.
		if err := o.waitPNG(); err != nil {
			return err
		}
	}
	plane, ny, nx, _, lo, hi, err := coarsePlane(c, viewOf(s), o.cfg.Output.Slice, o.cfg.Output.ImageSize, &o.bufs[c.Rank()])
	if err != nil || c.Rank() != 0 {
		return err
	}
	p, err := newPlaneImage(o.cfg, o.cfg.Grid.Shape, o.cfg.Output.Slice, o.cfg.Output.ImageSize, o.cfg.Equation.Kind, s.Step(), s.SimTime(), s.Residual(), lo, hi)
	if err != nil {
		return err
	}
	if !o.regionsSet {
		if o.regions, err = planeRegions(o.cfg, o.cfg.Grid.Shape, o.cfg.Output.Slice, p); err != nil {
			return err
		}
		o.regionsSet = true
	}
	p.Regions = o.regions
	base := filepath.Join(o.dir, name)
	for _, ext := range []string{".npy", ".json", "." + o.cfg.Output.ImageFormat} {
		if err := o.files.claim(base + ext); err != nil {
			return err
		}
	}
	// Drawing and encoding take longer than averaging: do them while the
	// solver goes on (the plane is this rank's buffer until the next PNG).
	o.pngDone = make(chan error, 1)
	go func() {
		err := snapshotPlane(filepath.Join(o.dir, name), plane, ny, nx, p)
		if err == nil {
			err = drawPlane(filepath.Join(o.dir, name+"."+o.cfg.Output.ImageFormat), plane, ny, nx, p)
		}
		o.pngDone <- err
	}()
	return nil
}

// fieldView is one rank's box of a field as the plane averaging reads it:
// the grid's split, the box's layout and values, the threads to use; in
// media the conductivity k laid out as u, whose holes (k = 0) are left out
// of the picture as NaN cells are (drawn masked where a pixel holds
// nothing else).
type fieldView struct {
	field.Field
	grid    *decomp.Grid
	threads int
	holes   []float64 // k, laid out as the field; nil: no holes
}

func viewOf(s *solver.Solver) fieldView {
	v := fieldView{Field: field.Of(s.Field(), s.Layout()), grid: s.Grid(), threads: s.Threads()}
	if m := s.Media(); m != nil {
		v.holes = m.K // the solver's layout
	}
	return v
}

// planeAxes are the axes of the plane of a field of shape a picture shows
// (py slower, px faster) and, in 3D, the cut spec names (its axis, its
// cell and heatmap's label of it; cut −1 in 2D). The remaining axes keep C
// order: z cuts to (y, x), y to (z, x), x to (z, y).
func planeAxes(spec string, shape []int) (py, px, cut, at int, label string, err error) {
	if len(shape) != 3 {
		return 0, 1, -1, 0, "", nil
	}
	if cut, at, label, err = heatmap.ParseSlice(spec, shape); err != nil {
		return
	}
	rest := [3][2]int{{1, 2}, {0, 2}, {0, 1}}[cut]
	return rest[0], rest[1], cut, at, label, nil
}

// coarsePlane is the plane of the field a PNG shows, already box-averaged
// to at most maxPixels a side, on rank 0, with the plane's finite min and
// max. Each rank sums its own cells into the pixels its box covers and
// sends rank 0 just those partial sums, so a snapshot moves a picture's
// worth of numbers, not the field. Collective.
//
// Pixels average finite cells, by heatmap's rule (heatmap.InfBox), and
// leave out the holes of the media (s.holes) as they leave out NaN: a pixel
// with +Inf cells and no -Inf ones is +Inf (drawn at the map's hot end),
// and likewise -Inf; one with both is NaN, as is one of NaN cells only. A
// cell that is NaN or ±Inf is rare, so instead of a count per pixel (as
// many numbers again, and fresh pages cost here more than the arithmetic) a
// part lists the pixels that skipped cells, with the infinities they met.
func coarsePlane(c comm.Comm, s fieldView, spec string, maxPixels int, bufs *planeBufs) (plane []float64, ny, nx int, label string, lo, hi float64, err error) {
	shape := s.grid.Shape
	py, px, cut, at, label, err := planeAxes(spec, shape)
	if err != nil {
		return
	}
	ny, nx = shape[py], shape[px]
	f := heatmap.Factor(ny, nx, maxPixels)
	cy, cx := (ny+f-1)/f, (nx+f-1)/f
	mine, skips := planePart(s, py, px, cut, at, f, bufs)
	if c.Rank() != 0 {
		reqs := make([]comm.Request, 0, 2)
		req, err := c.Isend(mine, 0, planeTag)
		if err == nil {
			reqs = append(reqs, req)
			if len(skips) > 0 {
				req, err = c.Isend(skips, 0, planeTag+1)
				reqs = append(reqs, req)
			}
		}
		if err != nil {
			return nil, 0, 0, "", 0, 0, err
		}
		return nil, 0, 0, "", 0, 0, c.Waitall(reqs)
	}
	// skipped counts, per pixel, the cells left out, and infs the
	// infinities among them (skipPosInf, skipNegInf); nil while there are none.
	var skipped []float64
	var infs []uint8
	addSkips := func(p, list []float64) {
		if skipped == nil {
			skipped, infs = make([]float64, cy*cx), make([]uint8, cy*cx)
		}
		// The list numbers the part's own pixels, row by row.
		y0, x0, w := int(p[0]), int(p[2]), int(p[3]-p[2])
		for i := 0; i < len(list); i += skipEntry {
			k := int(list[i])
			pix := (y0+k/w)*cx + x0 + k%w
			skipped[pix] += list[i+1]
			infs[pix] |= uint8(list[i+2])
		}
	}
	sums := mine[partHeader:]
	if c.Size() > 1 {
		sums = resize(&bufs.sums, cy*cx)
		lo, hi = math.Inf(1), math.Inf(-1)
		for r := range c.Size() {
			p := mine
			if r > 0 {
				b := s.grid.Box(r)
				y0, y1, x0, x1 := pixelSpan(b, py, f), pixelSpanHi(b, py, f), pixelSpan(b, px, f), pixelSpanHi(b, px, f)
				n := partHeader
				if cut < 0 || (at >= b.Lo[cut] && at < b.Hi[cut]) {
					n += (y1 - y0) * (x1 - x0)
				}
				p = make([]float64, n)
				if err := recv(c, p, r, planeTag); err != nil {
					return nil, 0, 0, "", 0, 0, err
				}
			}
			y0, y1, x0, x1 := int(p[0]), int(p[1]), int(p[2]), int(p[3])
			lo, hi = min(lo, p[4]), max(hi, p[5])
			w := x1 - x0
			vals := p[partHeader:]
			for Y := y0; Y < y1; Y++ {
				row := sums[Y*cx+x0 : Y*cx+x1]
				for X, v := range vals[(Y-y0)*w : (Y-y0+1)*w] {
					row[X] += v
				}
			}
			if n := int(p[6]); n > 0 {
				if r > 0 {
					skips = make([]float64, skipEntry*n)
					if err := recv(c, skips, r, planeTag+1); err != nil {
						return nil, 0, 0, "", 0, 0, err
					}
				}
				addSkips(p, skips)
			}
		}
	} else {
		lo, hi = mine[4], mine[5]
		if len(skips) > 0 {
			addSkips(mine, skips)
		}
	}
	// The average, in place of the sums: rank 0's part or its sum buffer,
	// which stay untouched until the next snapshot.
	for Y := range cy {
		h := min(ny, (Y+1)*f) - Y*f
		for X := range cx {
			k := Y*cx + X
			n := float64(h * (min(nx, (X+1)*f) - X*f))
			if skipped != nil {
				n -= skipped[k]
				if infs[k] != 0 {
					sums[k] = heatmap.InfBox(infs[k]&skipPosInf != 0, infs[k]&skipNegInf != 0)
					continue
				}
			}
			if n > 0 {
				sums[k] /= n
			} else {
				sums[k] = math.NaN()
			}
		}
	}
	return sums, cy, cx, label, lo, hi, nil
}

// recv receives exactly len(buf) values from rank src.
func recv(c comm.Comm, buf []float64, src, tag int) error {
	req, err := c.Irecv(buf, src, tag)
	if err != nil {
		return err
	}
	return c.Waitall([]comm.Request{req})
}

// planeBufs are one rank's buffers of coarsePlane, kept between snapshots:
// fresh megabytes cost page faults, which dominated a snapshot.
type planeBufs struct {
	part []float64 // this rank's part
	sums []float64 // rank 0, several ranks: the whole plane's sums
}

// resize returns *buf cut or grown to n values, all zero.
func resize(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = hugemem.Floats(n)
	}
	*buf = (*buf)[:n]
	clear(*buf)
	return *buf
}

// planeTag is the message tag of coarsePlane's parts (planeTag+1: their
// lists of skipped cells).
const planeTag = comm.TagPlane

// partHeader is the length of a part's header: y0, y1, x0, x1 of the pixels
// it covers, the min and max of its finite cells, and how many pixels
// skipped cells.
const partHeader = 7

// skipEntry is the length of an entry of a part's list of pixels that
// skipped cells: the pixel, how many cells it skipped, and which
// infinities among them (the bits skipPosInf, skipNegInf).
const (
	skipEntry  = 3
	skipPosInf = 1
	skipNegInf = 2
)

func pixelSpan(b decomp.Box, a, f int) int   { return b.Lo[a] / f }
func pixelSpanHi(b decomp.Box, a, f int) int { return (b.Hi[a] + f - 1) / f }

// planePart is this rank's share of a coarse plane: a header (partHeader)
// and the sums of the finite cells of each pixel its box covers, plus the
// list (skipEntry) of pixels where cells were NaN or ±Inf. A box the plane
// misses sends the header alone.
func planePart(s fieldView, py, px, cut, at, f int, bufs *planeBufs) (part, skips []float64) {
	lay := s.Layout
	box := lay.Box
	y0, y1, x0, x1 := pixelSpan(box, py, f), pixelSpanHi(box, py, f), pixelSpan(box, px, f), pixelSpanHi(box, px, f)
	lo, hi := math.Inf(1), math.Inf(-1)
	if cut >= 0 && (at < box.Lo[cut] || at >= box.Hi[cut]) {
		return []float64{float64(y0), float64(y0), float64(x0), float64(x0), lo, hi, 0}, nil
	}
	w := x1 - x0
	n := (y1 - y0) * w
	part = resize(&bufs.part, partHeader+n)
	sums := part[partHeader:]
	corner := slices.Clone(box.Lo) // the box's first cell in the plane
	if cut >= 0 {
		corner[cut] = at
	}
	base := s.Index(corner...)
	u := s.Data
	sy, sx := lay.Stride[py], lay.Stride[px]
	// The rank's threads take whole pixel rows each, so no two write the
	// same sums.
	threads := max(1, s.threads)
	los, his := make([]float64, threads), make([]float64, threads)
	lists := make([][]float64, threads)
	var wg sync.WaitGroup
	for t := range threads {
		Y0, Y1 := decomp.Split(y1-y0, threads, t)
		wg.Go(func() {
			lo, hi := math.Inf(1), math.Inf(-1)
			var list []float64
			for y := max(box.Lo[py], (y0+Y0)*f); y < min(box.Hi[py], (y0+Y1)*f); y++ {
				row := base + (y-box.Lo[py])*sy
				kRow := (y/f - y0) * w
				sums := sums[kRow:]
				// A pixel block at a time, without a division per block:
				// cells [xb, end) of the row fall in pixel k.
				k := 0
				for xb, end := box.Lo[px], min(box.Hi[px], (box.Lo[px]/f+1)*f); xb < box.Hi[px]; xb, end, k = end, min(box.Hi[px], end+f), k+1 {
					first, last := row+(xb-box.Lo[px])*sx, row+(end-1-box.Lo[px])*sx
					cells := u[first : last+1]
					var ks []float64 // the cells' k, in media
					if s.holes != nil {
						ks = s.holes[first : last+1]
					}
					sum, skip, inf := 0.0, 0, 0
					for i := 0; i < len(cells); i += sx {
						v := cells[i]
						if ks != nil && ks[i] == 0 { // a hole: masked
							skip++
							continue
						}
						if v-v != 0 { // NaN or ±Inf
							skip++
							if v > 0 {
								inf |= skipPosInf
							} else if v < 0 {
								inf |= skipNegInf
							}
							continue
						}
						sum += v
						if v < lo {
							lo = v
						}
						if v > hi {
							hi = v
						}
					}
					sums[k] += sum
					if skip > 0 {
						list = append(list, float64(kRow+k), float64(skip), float64(inf))
					}
				}
			}
			los[t], his[t], lists[t] = lo, hi, list
		})
	}
	wg.Wait()
	for t := range threads {
		lo, hi = min(lo, los[t]), max(hi, his[t])
		skips = append(skips, lists[t]...)
	}
	copy(part, []float64{float64(y0), float64(y1), float64(x0), float64(x1), lo, hi, float64(len(skips) / skipEntry)})
	return part, skips
}

// mediaCells are the media's cell arrays of a snapshot, the box's cells in
// C order: k, rho_c and the mask of held cells (UInt8, 1 where held); nil
// for the uniform medium.
func mediaCells(m *operator.Media) []vtk.Array {
	if m == nil {
		return nil
	}
	mask := m.Gather(m.Held)
	for i, v := range mask {
		mask[i] = 0
		if !math.IsNaN(v) {
			mask[i] = 1
		}
	}
	return []vtk.Array{{Name: "k", Data: m.Gather(m.K)}, {Name: "rho_c", Data: m.Gather(m.RhoC)}, {Name: "mask", Data: mask, UInt8: true}}
}

func (o *outputs) vti(c comm.Comm, s *solver.Solver, name string) error {
	g := vtk.Grid{Shape: o.cfg.Grid.Shape, Spacing: o.cfg.Grid.Geometry().Spacing()}
	opt := vtk.Options{Float32: o.cfg.Output.VTKFloat32, Compress: o.cfg.Output.VTKCompress}
	u := field.Of(s.Field(), s.Layout())
	box, local := u.Layout.Box, u.Owned()
	opt.Extra = mediaCells(s.Media())
	file := name + ".vti"
	var err error
	if c.Size() == 1 {
		path := filepath.Join(o.dir, file)
		if err = o.files.claim(path); err == nil {
			err = vtk.WriteVTI(path, g, box.Lo, box.Hi, local, opt)
		}
	} else {
		pieceDir := filepath.Join(o.dir, name)
		piece := filepath.Join(pieceDir, fmt.Sprintf("piece-%04d.vti", c.Rank()))
		if err = o.files.claimDir(pieceDir); err == nil {
			if err = o.files.claim(piece); err == nil {
				err = vtk.WriteVTI(piece, g, box.Lo, box.Hi, local, opt)
			}
		}
	}
	// Every rank's piece must be on disk before rank 0 lists them.
	who, _, rerr := comm.Agree(c, err != nil, 1)
	switch {
	case rerr != nil:
		return rerr
	case err != nil:
		return fmt.Errorf("snapshot %s: %w", name, err)
	case who >= 0:
		return fmt.Errorf("snapshot %s: rank %d failed to write its piece", name, who)
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
		if err := o.files.claimPieces(pieces); err != nil {
			return err
		}
		if err := o.files.claim(filepath.Join(o.dir, file)); err != nil {
			return err
		}
		// opt.Extra is rank 0's: every piece has the same arrays.
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
