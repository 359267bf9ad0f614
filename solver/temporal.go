package solver

import (
	"time"

	"heat/decomp"
	"heat/operator"
)

// Temporal blocking. With Ghost = k > 1 a rank exchanges all k ghost layers
// (corners included) once, then advances its box m <= k steps with no
// further messages: step t of the block updates the box grown by m−t cells
// towards every neighbour, so the ghost cells computed redundantly at step
// t are exactly what step t+1 needs. That divides the messages per step by
// k (communication avoiding).
//
// Inside the rank the block runs as a wavefront along the slowest axis, so
// that it also reuses data from cache: a "slab" is one index of that axis
// (a row in 2D, a plane in 3D). Each worker owns a band of slabs; at front
// position p it computes slab p of step 1, slab p−1 of step 2, …, slab
// p−m+1 of step m. The intermediate steps live in rings of four slabs per
// step, so the field is read once and written once per block instead of
// once per step. Bands overlap by the slabs their neighbours' wavefronts
// need (computed twice, identically).
//
// In 3D a whole plane per ring slot would not stay in cache, so each band
// is also cut into tiles of rows along y, and the wavefront runs tile by
// tile: step t of a tile covers its rows grown by m−t on each side (an
// overlapped tile, its rim computed again by the next tile, identically),
// so the rings only ever hold a tile's rows.
//
// Every cell is computed by the same row kernel from the same operands as in
// the one-step path, so the bits are identical for every k, split and
// thread count. Boundary ghosts are set at each step from that step's
// values. A block ends at the next check (CheckEvery) so checks, and
// Jacobi's stop, fall on the same steps for every k.

// wavefront holds one worker's ring buffers: ring[t-1][z mod 4] is slab z of
// step t of the block, for t = 1 … k−1.
type wavefront struct {
	ring [][4][]float64
	// rows are the kernel's operands, kept here (operator.SlabRows).
	rows operator.SlabRows
}

// block advances m steps with one exchange.
func (s *Solver) block(m int, check bool) error {
	if check {
		clear(s.resid)
	}
	s.trace("start")
	if err := s.plan.Start(s.u); err != nil {
		return err
	}
	if err := s.plan.Finish(s.u); err != nil {
		return err
	}
	s.trace("finish")
	t0 := time.Now()
	operator.ApplyFaces(s.faces, s.u)
	if s.waves == nil {
		s.waves = make([]wavefront, s.spec.Threads)
	}
	s.job = job{blockM: m, check: check}
	s.team.RunEach(s.work) // a band a worker: more bands would compute more overlap
	s.stats.Compute += time.Since(t0)
	s.trace("block")
	s.u, s.v = s.v, s.u
	s.step += m
	if s.spec.Equation == Heat {
		s.simTime = s.spec.timeAt(s.step)
	}
	return nil
}

// growth is how far step t of an m-step block reaches past the box on side
// (0 low, 1 high) of axis a: m−t towards a neighbour, 0 at a physical face.
func (s *Solver) growth(a, side, m, t int) int {
	if s.hasNeighbour[a][side] {
		return m - t
	}
	return 0
}

// waveTileBytes is the cache a 3D wavefront tile aims to stay in: the
// rings of all its steps and the three source slabs, for one worker.
// Measured (benchmarks/results/2026-11-30-kernels-mpi-scaling.md): 2 to 16 MiB run
// alike in 3D, and again 1 to 8 MiB on 512³ with the assembly kernels
// (2026-12-01-kernels-assembly.md).
var waveTileBytes = 4 << 20

// waveTileBytes2D is the 2D budget: with the assembly kernels (8192², 2
// threads, 8-step blocks) 1 MiB — tiles of ~2,950 columns — ran 2,760–2,800
// Mupdates/s, against 2,210–2,330 at 2 to 8 MiB (whole rows) and 1,570–2,040
// at 256 and 512 KiB (pieces too short for the prefetcher).
var waveTileBytes2D = 1 << 20

// waveTileFixed, when positive, is the tile size instead (a test hook).
var waveTileFixed = 0

// waveTile is the extent along axis 1 (x in 2D, y in 3D) of the wavefront
// tiles of an m-step block: as many cells or rows as keep (m+3) slots of
// the tile, grown by the overlap, within waveTileBytes, but at least 4
// overlaps.
func (s *Solver) waveTile(m int) int {
	if waveTileFixed > 0 {
		return waveTileFixed
	}
	nd := len(s.lay.N)
	unit := 8 // bytes per index along axis 1 in a slab: a cell in 2D ...
	budget := waveTileBytes2D
	if nd == 3 {
		unit = 8 * s.lay.Stride[1] // ... a row in 3D
		budget = waveTileBytes
	}
	grow := 2 * (m - 1)
	h := budget/(4*(m+3)*unit) - grow
	return max(h, 4*grow, 1)
}

// runWavefront advances worker w's band of slabs m steps, from u into v.
func (s *Solver) runWavefront(w, m int, check bool) {
	n0 := s.lay.N[0]
	a, b := decomp.Split(n0, s.spec.Threads, w)
	if a >= b {
		return
	}
	wf := &s.waves[w]
	slab := s.lay.Stride[0]
	for len(wf.ring) < m-1 {
		var r [4][]float64
		for i := range r {
			r[i] = make([]float64, slab)
		}
		wf.ring = append(wf.ring, r)
	}
	resid := 0.0
	n1 := s.lay.N[1]
	h := s.waveTile(m)
	for y := 0; y < n1; y += h {
		d := s.wavefront(wf, a, b, y, min(y+h, n1), m, check)
		if d > resid || d != d {
			resid = d
		}
	}
	if check && (resid > s.resid[w] || resid != resid) {
		s.resid[w] = resid
	}
}

// wavefront advances slabs [a, b) of the box m steps, from u into v, over
// [y0, y1) along axis 1 (columns in 2D, rows in 3D). With check it returns
// max |Δu| over the cells it wrote into v.
func (s *Solver) wavefront(wf *wavefront, a, b, y0, y1, m int, check bool) float64 {
	n0 := s.lay.N[0]
	slab := s.lay.Stride[0]
	g := s.lay.Ghost
	// The slabs of step t: [lo(t), hi(t)), growing past the band towards a
	// neighbouring band or rank.
	lo := func(t int) int {
		if a > 0 {
			return a - (m - t)
		}
		return -s.growth(0, 0, m, t)
	}
	hi := func(t int) int {
		if b < n0 {
			return b + (m - t)
		}
		return n0 + s.growth(0, 1, m, t)
	}
	// The extent of step t along axis 1: the tile's, grown by m−t towards
	// the next tile or as far as the step reaches past the box.
	rows := func(t int) (int, int) {
		n1 := s.lay.N[1]
		r0, r1 := y0-(m-t), y1+(m-t)
		if y0 == 0 {
			r0 = -s.growth(1, 0, m, t)
		}
		if y1 == n1 {
			r1 = n1 + s.growth(1, 1, m, t)
		}
		return r0, r1
	}
	// get is slab z of step t (0: the field u).
	get := func(t, z int) []float64 {
		if t == 0 {
			return s.u[(z+g)*slab : (z+g+1)*slab]
		}
		return wf.ring[t-1][((z%4)+4)%4]
	}
	var src [3][]float64
	var f []float64
	resid := 0.0
	pr0, pr1 := rows(1)
	for p := lo(1); p < hi(m)+m-1; p++ {
		if q := p + 2; len(s.lay.N) == 2 && q <= hi(1) {
			// 2D: the field's row that step 1 reads two positions on, a
			// tile's piece too short for the hardware prefetchers (8192²,
			// 8-step blocks, 2 threads: +10–15%).
			o := (q + g) * slab
			operator.Prefetch(s.u[o+g+pr0-1 : o+g+pr1+1])
		}
		for t := 1; t <= m; t++ {
			z := p - (t - 1)
			if z < lo(t) || z >= hi(t) {
				continue
			}
			src[0], src[1], src[2] = get(t-1, z-1), get(t-1, z), get(t-1, z+1)
			if s.f != nil {
				f = s.f[(z+g)*slab : (z+g+1)*slab]
			}
			var dst []float64
			if t == m {
				dst = s.v[(z+g)*slab : (z+g+1)*slab]
			} else {
				dst = get(t, z)
			}
			r0, r1 := rows(t)
			d := s.slabStep(&wf.rows, dst, src, f, m, t, r0, r1, check)
			if t == m && check {
				if d > resid || d != d {
					resid = d
				}
			}
			if t < m {
				s.slabBoundaries(dst, r0, r1)
				if z == 0 && !s.hasNeighbour[0][0] {
					s.mirrorSlab(wf.ring[t-1][3], dst, 0, r0, r1)
				}
				if z == n0-1 && !s.hasNeighbour[0][1] {
					s.mirrorSlab(wf.ring[t-1][n0%4], dst, 1, r0, r1)
				}
			}
		}
	}
	return resid
}

// slabStep updates one slab of step t: in 2D columns [r0, r1) of its row,
// in 3D its rows [r0, r1) over the columns step t covers. On the block's
// last step, with check, it returns max |Δu| over the cells it wrote.
func (s *Solver) slabStep(sr *operator.SlabRows, dst []float64, src [3][]float64, f []float64, m, t, r0, r1 int, check bool) float64 {
	g := s.lay.Ghost
	n := s.lay.N
	nd := len(n)
	xlo, xhi := r0, r1
	if nd == 3 {
		xlo, xhi = -s.growth(2, 0, m, t), n[2]+s.growth(2, 1, m, t)
	}
	// row updates rows rows of the slab from the one at off (3D: one y-row
	// after another, one call of the many-row kernel).
	row := func(off, rows int) float64 {
		return s.ustep.Slab(sr, dst, src, f, off+g+xlo, xhi-xlo, rows, s.lay.Stride[1], t == m && check)
	}
	if nd == 2 {
		return row(0, 1)
	}
	if r1 > r0 {
		return row((r0+g)*s.lay.Stride[1], r1-r0)
	}
	return 0
}

// slabBoundaries sets the first ghost layer of the physical faces inside a
// slab (all axes but the slowest) from the slab's own values, over [r0, r1)
// along axis 1: in 3D the x ghosts of those rows, and the ghost row next to
// them at a physical y face; in 2D the x ghost next to those columns.
func (s *Solver) slabBoundaries(sl []float64, r0, r1 int) {
	g := s.lay.Ghost
	n := s.lay.N
	nd := len(n)
	for a := 1; a < nd; a++ {
		for side := range 2 {
			if s.hasNeighbour[a][side] {
				continue
			}
			face := s.spec.Faces[a][side]
			ghost, mirror := -1, 0
			if side == 1 {
				ghost, mirror = n[a], n[a]-1
			}
			if nd == 2 {
				// The row's ghost cell, if the columns reach the face.
				if (side == 0 && r0 <= 0) || (side == 1 && r1 >= n[1]) {
					sl[g+ghost] = face.Ghost(sl[g+mirror])
				}
				continue
			}
			if a == 2 {
				// 3D, axis x: one cell in every row.
				sy := s.lay.Stride[1]
				for r := r0; r < r1; r++ {
					base := (r+g)*sy + g
					sl[base+ghost] = face.Ghost(sl[base+mirror])
				}
				continue
			}
			// 3D, axis y: the ghost row, if the rows reach the face.
			if (side == 0 && r0 > 0) || (side == 1 && r1 < n[1]) {
				continue
			}
			sy := s.lay.Stride[1]
			gr := sl[(ghost+g)*sy : (ghost+g+1)*sy]
			mr := sl[(mirror+g)*sy : (mirror+g+1)*sy]
			for j := range gr {
				gr[j] = face.Ghost(mr[j])
			}
		}
	}
}

// mirrorSlab sets the ghost slab beyond the slowest axis' physical face on
// side from the outermost slab, over [r0, r1) along axis 1 (columns of the
// row in 2D, rows in 3D).
func (s *Solver) mirrorSlab(ghost, edge []float64, side, r0, r1 int) {
	face := s.spec.Faces[0][side]
	g := s.lay.Ghost
	unit := 1
	if len(s.lay.N) == 3 {
		unit = s.lay.Stride[1]
	}
	ghost, edge = ghost[(r0+g)*unit:(r1+g)*unit], edge[(r0+g)*unit:(r1+g)*unit]
	for j := range ghost {
		ghost[j] = face.Ghost(edge[j])
	}
}
