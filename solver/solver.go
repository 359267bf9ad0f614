// Package solver advances the heat equation (explicit FTCS) or Jacobi
// iterations for Poisson's equation on one rank's box of a decomposed 2D or
// 3D grid. Each step overlaps the ghost exchange with work that needs no
// remote data: Start exchange → interior → Finish exchange → rim → swap.
// Within a rank, persistent worker goroutines split the rows.
package solver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"heat/comm"
	"heat/decomp"
	"heat/halo"
	"heat/internal/cachesize"
	"heat/internal/hugemem"
	"heat/internal/team"
	"heat/multigrid"
	"heat/operator"
)

// JacobiWeight is ω of the weighted Jacobi iteration for Poisson.
const JacobiWeight = operator.JacobiWeight

// ErrStopped is returned by Run when its context was cancelled; the field is
// consistent at the step the ranks agreed to stop on.
var ErrStopped = errors.New("solver: stopped")

// DivergedError ends a run whose field is no longer finite: the step the
// check found it at, and what it measured.
type DivergedError struct {
	Step int
	What string // "max |Δu| = +Inf", "relative residual NaN"
}

func (e *DivergedError) Error() string {
	return fmt.Sprintf("step %d: the solution is no longer finite (%s)", e.Step, e.What)
}

// Stats are one rank's counters.
type Stats struct {
	Compute  time.Duration // updating cells and applying boundaries
	HaloWait time.Duration // blocked waiting for ghost values
	Messages int64         // halo messages sent
	Bytes    int64         // halo payload bytes sent
	Checks   int64         // residual checks (one Allreduce each)
	Reduce   time.Duration // in the checks' Allreduce, waiting for the slowest rank included
	// Control is the step controller's own work (equation.dt = "auto"):
	// keeping and restoring the step's start, the error estimate and its
	// Allreduce, the extrapolation; the solves are Compute's.
	Control time.Duration
}

// row is a run of cells along the last axis: flat index of the first, count.
type row = decomp.Span

// region is a set of rows split into one contiguous share per worker.
type region struct {
	rows  []row
	share []int // worker w takes rows[share[w]:share[w+1]]
	// runs[w] are worker w's rows grouped into runs of equal rows one
	// y-stride apart, each updated by one call of the many-row kernel;
	// ghosts[w][i] are the physical faces' ghosts run i reads, which the
	// worker sets just before it, but the x faces': the kernels set those
	// themselves, each row's (operator.RunFaces).
	runs   [][]decomp.Run
	ghosts [][]operator.RunFaces
}

// StreamAbove is the size of the fields (both, on all the ranks of this
// process) above which a 2D one-step sweep stores its rows past the caches
// (non-temporal stores, where the kernel set has them): the fields cannot
// stay in cache from one step to the next, so reading each destination
// line before writing it (a third of the traffic) buys nothing. Measured
// (AVX-512, 1 and 2 threads): 8192² (1 GiB) 10–35% faster streaming,
// 4096² (256 MiB) even, 2048² 40% slower. In 3D the rows are short, and
// their ends, written through the cache next to streamed lines, made 128³
// and 256³ 2–4× slower: 3D does not stream.
var StreamAbove = 512 << 20

// Solver is one rank's part of a run.
type Solver struct {
	spec  Spec
	c     comm.Comm
	grid  *decomp.Grid
	lay   decomp.Layout
	plan  *halo.Plan
	team  *team.Team
	parts int // the parts a sweep is cut into (team.PartsFor the box)
	// ustep is the uniform medium's explicit step or Jacobi sweep (one-step
	// runs and temporal tiles).
	ustep *operator.UniformStep
	u, v  []float64 // current and next field, ghosts included
	f     []float64 // source term (times dt for heat), nil if none
	inner region    // cells whose stencil reads no ghost
	rim   region    // the other cells
	// faces are the physical faces' ghost layers, all of them, corners
	// included: temporal blocks set them before a block. The one-step path
	// sets only the face ghosts each run reads, in the run's worker
	// (region.ghosts).
	faces []operator.GhostFace
	bound *operator.Boundary // the faces' per-cell ghost coefficients (nil: none needs them)
	acct  *energy            // the heat equation's energy account (nil: none kept)
	// srcScale is the source's scale in f (the explicit update's, or the
	// implicit right-hand side's dt); srcKey names the field f holds
	// (Spec.SourceKey, srcKeyed once set).
	srcScale float64
	// srcW is the source's weight in time (Spec.SourceWeight) for the
	// step; cf the explicit step's source coefficient before it (1, or a
	// shortened last step's dt/DT).
	srcW, cf float64
	srcKey   string
	srcKeyed bool
	// hasNeighbour[a][side]: a rank (maybe this one, periodic) lies beyond
	// that face of the box; otherwise it is a physical face.
	hasNeighbour [][2]bool
	waves        []wavefront // temporal blocking, per worker
	job          job         // the workers' current dispatch
	// Gather's buffers, kept between calls (a snapshot series would
	// otherwise allocate the whole field each time).
	gathered, gatherSend []float64
	gatherRecv           [][]float64
	work                 func(int) // s.doWork, bound once
	resid                []float64 // per-worker max |Δu| of the last checked step

	// Heterogeneous media (nil: the uniform medium): the coefficients, and
	// the explicit step or Jacobi sweep over them (nil: solved by multigrid).
	media *operator.Media
	mstep *operator.MediaStep
	dt    float64 // the time step (spec.DT, or the one picked from the media's limit)

	mg  *multigrid.MG // multigrid (Poisson) or the implicit steps' solver
	ref float64       // Poisson by multigrid: ‖b‖∞ with the boundary values lifted
	// The solve under way (Poisson's, or the implicit step's): its figures
	// after each iteration (converged.go).
	solve track
	// After each cycle (Poisson) or each step's last (heat): the relative
	// residual, the normwise and the componentwise backward error.
	history, backwardHistory, componentHistory []float64
	floorSteps                                 int      // solves that stopped at the rounding floor
	floorBackward                              float64  // the largest normwise backward error one stopped at
	cycles                                     int      // multigrid cycles done
	ho                                         handOver // plain cycles in media that may hand a solve over to mgcg (handover.go)
	stepDT                                     float64  // the step the multigrid operator is set up for
	sd                                         *sdirk   // SDIRK4's stages
	stageEnd                                   *float64 // an SDIRK stage's time, its terms taken there (stepEnd)
	stalled                                    bool     // Poisson by multigrid: stopped at the rounding floor above the tolerance
	// ‖A‖∞ of the operator solved (-1: not yet taken), and the last
	// iteration's normwise and componentwise backward errors.
	normA, backward, component float64
	noData                     bool // Poisson with f = 0 and zero boundary values: ref is the first iterate's residual

	step      int
	simTime   float64
	ctrl      *ctrl // the step controller of equation.dt = "auto"; nil with fixed steps
	residual  float64
	converged bool
	stats     Stats
}

// New sets up rank c.Rank()'s solver: decomposition, field with its initial
// condition, halo plan and worker goroutines. Call Close when done.
func New(c comm.Comm, spec Spec) (*Solver, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	g, err := decomp.New(spec.Shape, c.Size(), spec.Dims, spec.Periodic())
	if err != nil {
		return nil, err
	}
	lay := decomp.NewLayout(g.Box(c.Rank()), spec.Ghost)
	if spec.SourceField != nil {
		if spec.Source, err = boxProfile(c, lay.Box, spec.SourceField); err != nil {
			return nil, err
		}
	}
	if spec.SourceWeight != nil && spec.SourceAt == nil {
		p := spec.Source
		spec.SourceAt = func(float64) Profile { return p }
		spec.SourceKey = func(float64) string { return "" }
	}
	if spec.SourceWeight != nil && !spec.weighs() {
		spec = spec.unweighted()
	}
	if spec.SourceAt != nil && spec.Source == nil {
		spec.Source = spec.SourceAt(0) // the arrays; each step sets its own
	}
	s := &Solver{spec: spec, c: c, grid: g, lay: lay}
	// One ghost layer: faces only, exchanged every step and overlapped with
	// the interior. Deeper ghosts: every layer, corners included, once per
	// block of up to Ghost steps (temporal.go).
	hopt := halo.Options{Width: 1, Tag: comm.TagHalo}
	if spec.Ghost > 1 {
		hopt = halo.Options{Width: spec.Ghost, Phased: true, Tag: comm.TagHalo}
	}
	s.plan, err = halo.NewPlan(c, g, s.lay, hopt)
	if err != nil {
		return nil, err
	}
	nd := len(spec.Shape)
	// Both equations are one update u' = c0·u + Σ c_a·(neighbours along a)
	// + f', with f' the source scaled to the update (kernel.go); the
	// operator sets the weights (FTCS, or weighted Jacobi). One-step
	// sweeps of 2D fields past StreamAbove store past the caches.
	unif := operator.NewUniform(spec.Alpha, spec.Spacing())
	stream := nd == 2 && 2*8*s.lay.Len()*comm.RanksHere(c) > StreamAbove
	var sourceScale float64
	switch spec.Equation {
	case Heat:
		s.ustep, sourceScale = unif.ExplicitStep(s.lay, spec.DT, stream)
	case Poisson:
		s.ustep, sourceScale = unif.JacobiStep(s.lay, stream)
	default:
		return nil, fmt.Errorf("solver: unknown equation %d", spec.Equation)
	}
	s.hasNeighbour = make([][2]bool, nd)
	for a := range nd {
		for side := range 2 {
			off := make([]int, nd)
			off[a] = 2*side - 1
			_, s.hasNeighbour[a][side] = g.Neighbor(c.Rank(), off)
		}
	}
	s.cf, s.srcW = 1, 1
	s.dt = spec.DT
	if spec.Media != nil && !spec.usesMG() {
		// The variable-coefficient kernels scale the source themselves
		// (dt/ρc for heat); Jacobi's right-hand side of −∇·(k∇u) is −f.
		sourceScale = 1
		if spec.Equation == Poisson {
			sourceScale = -1
		}
	}

	if spec.Media != nil {
		if err := s.newMedia(); err != nil {
			return nil, err
		}
	}
	if !spec.usesMG() {
		s.u = hugemem.Floats(s.lay.Len())
		s.v = hugemem.Floats(s.lay.Len())
		if err := s.setInitial(s.u); err != nil {
			return nil, err
		}
		if s.media != nil {
			s.media.Hold(s.u)
		}
		// Touch v now, not in the first step: its page faults belong to
		// the setup (on 8192², 512 MB, they halved a 20-step run's rate).
		copy(s.v, s.u)
	}
	if spec.Source != nil && !(spec.Equation == Poisson && spec.usesMG()) {
		// The source scaled to the update (multigrid Poisson puts it
		// into the right-hand side instead).
		s.f = hugemem.Floats(s.lay.Len())
		s.fill(s.f, spec.Source, sourceScale, spec.Ghost > 1)
		s.srcScale = sourceScale
	} else if s.mstep != nil && spec.Equation == Poisson {
		s.f = hugemem.Floats(s.lay.Len()) // Laplace: the sweeps read a zero right-hand side
	}
	// Spin-waiting pays only when every worker of every rank in this
	// process has a core (and a P) of its own. Under MPI there is one rank
	// per process, and comm/mpi may run with a P more than the cores.
	s.work = s.doWork
	cores := min(runtime.NumCPU(), runtime.GOMAXPROCS(0))
	s.team = team.New(spec.Threads, spec.Threads*comm.RanksHere(c) <= cores)
	s.parts = s.team.PartsFor(s.lay.Box.Size())
	s.resid = make([]float64, s.parts)
	s.faces = operator.GhostFaces(s.lay, spec.Faces, s.hasNeighbour)
	s.splitRegions()
	if err := s.newBoundary(); err != nil {
		s.Close()
		return nil, err
	}
	if spec.usesMG() {
		if err := s.newMultigrid(); err != nil {
			s.Close()
			return nil, err
		}
		s.newCtrl()
		if spec.Scheme == SDIRK4 {
			s.sdirkState()
		}
	}
	if err := s.newEnergy(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the worker goroutines.
func (s *Solver) Close() { s.team.Close() }

// fill sets every cell of the box to scale·p(cell centre); with ghosts, also
// the ghost cells, at the global index they mirror through periodic axes
// (temporal blocking updates ghost cells and needs their source term).
// Ghosts past a non-periodic face are left alone.
func (s *Solver) fill(dst []float64, p Profile, scale float64, ghosts bool) {
	nd := len(s.spec.Shape)
	h := s.spec.Spacing()
	x := make([]float64, nd)
	idx := make([]int, nd)
	g := make([]int, nd)
	region := decomp.Box{Lo: make([]int, nd), Hi: slices.Clone(s.lay.N)}
	if ghosts {
		for a := range nd {
			region.Lo[a], region.Hi[a] = -s.lay.Ghost, s.lay.N[a]+s.lay.Ghost
		}
	}
	shape := s.spec.Shape
	periodic := s.spec.Periodic()
	s.lay.ForRows(region, func(start, n int) {
		s.lay.Global(start, idx) // the row's first cell
		first := idx[nd-1]
		for j := range n {
			idx[nd-1] = first + j
			copy(g, idx)
			inside := true
			for a := range nd {
				if g[a] < 0 || g[a] >= shape[a] {
					if !periodic[a] {
						inside = false
						break
					}
					g[a] = (g[a] + shape[a]) % shape[a]
				}
				x[a] = (float64(g[a]) + 0.5) * h[a]
			}
			if inside {
				dst[start+j] = scale * p(x, g)
			}
		}
	})
}

// splitRegions precomputes the interior rows (whose stencil reads no ghost)
// and the rim rows, each shared among the workers by cell count.
func (s *Solver) splitRegions() {
	nd := len(s.lay.N)
	n := s.lay.N
	// The interior stops one cell short of every face with a neighbour: its
	// ghosts arrive with the exchange. Ghosts of physical faces are set by
	// the rows that read them, so the interior reaches those faces.
	in := decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
	empty := false
	for a := range nd {
		in.Lo[a], in.Hi[a] = 0, n[a]
		if s.hasNeighbour[a][0] {
			in.Lo[a] = 1
		}
		if s.hasNeighbour[a][1] {
			in.Hi[a] = n[a] - 1
		}
		if in.Hi[a] <= in.Lo[a] {
			empty = true
		}
	}
	whole := decomp.Box{Lo: make([]int, nd), Hi: n}
	var rim []decomp.Box
	if empty {
		in = decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
		rim = []decomp.Box{whole}
	} else {
		// Slabs: along axis a, below and above the interior; axes before a
		// limited to the interior, axes after a full.
		for a := range nd {
			for _, side := range [2][2]int{{0, in.Lo[a]}, {in.Hi[a], n[a]}} {
				if side[0] == side[1] {
					continue
				}
				b := decomp.Box{Lo: make([]int, nd), Hi: make([]int, nd)}
				for x := range nd {
					switch {
					case x < a:
						b.Lo[x], b.Hi[x] = in.Lo[x], in.Hi[x]
					case x == a:
						b.Lo[x], b.Hi[x] = side[0], side[1]
					default:
						b.Lo[x], b.Hi[x] = 0, n[x]
					}
				}
				rim = append(rim, b)
			}
		}
	}
	s.inner = s.makeRegion(s.cacheTiles(in))
	s.rim = s.makeRegion(rim)
}

// tileBytes is the working set of a cache tile's three planes: this host's
// L2 (the rows written stream through it). Measured, 3D 256³ on a 2 MiB L2:
// tiles sized for a 512 KiB one (256 KiB) and 768 KiB ran 520–545
// Mupdates/s on 1 thread, one box (the three 532 KiB planes fit) 590; 2
// threads 1,010–1,090 against 1,145–1,175.
var tileBytes = cachesize.L2()

// cacheTiles splits a 3D box into bands along y, swept over z one band at a
// time, so that the three planes' rows a 7-point update reads (z−1, z, z+1)
// stay in cache between uses. Bands go to the workers whole where they can.
// 2D boxes, and planes that fit already, stay one box.
func (s *Solver) cacheTiles(b decomp.Box) []decomp.Box {
	if len(b.Lo) != 3 || b.Empty() {
		return []decomp.Box{b}
	}
	row := 8 * s.lay.Padded[2]
	band := max(1, tileBytes/(3*row))
	ny := b.Hi[1] - b.Lo[1]
	if band >= ny {
		return []decomp.Box{b}
	}
	var out []decomp.Box
	for y := b.Lo[1]; y < b.Hi[1]; y += band {
		t := decomp.Box{Lo: slices.Clone(b.Lo), Hi: slices.Clone(b.Hi)}
		t.Lo[1], t.Hi[1] = y, min(y+band, b.Hi[1])
		out = append(out, t)
	}
	return out
}

func (s *Solver) makeRegion(boxes []decomp.Box) region {
	var r region
	for _, b := range boxes {
		s.lay.ForRows(b, func(start, n int) {
			r.rows = append(r.rows, row{Start: start, N: n})
		})
	}
	r.share = decomp.Shares(r.rows, s.parts)
	sy := s.lay.Stride[len(s.lay.N)-2]
	r.runs = make([][]decomp.Run, s.parts)
	for w := range r.runs {
		r.runs[w] = decomp.Runs(r.rows[r.share[w]:r.share[w+1]], sy)
	}
	r.ghosts = operator.RunsFaces(s.lay, s.spec.Faces, s.hasNeighbour, r.runs)
	return r
}

// update applies the kernel to a region from u into v, in parallel; with
// check it also records each worker's max |Δu|.
func (s *Solver) update(r *region, check bool) {
	if len(r.rows) == 0 {
		return
	}
	s.job = job{region: r, check: check}
	s.team.Run(s.parts, s.work)
}

// job is what the workers do in the current dispatch; kept in the Solver so
// that a dispatch allocates nothing (a closure per step would feed the
// garbage collector, whose pauses stop the spinning workers too).
type job struct {
	region *region // update these rows …
	blockM int     // … or, when region is nil, a temporal block of blockM steps
	check  bool
}

// work is worker w's share of the current job.
func (s *Solver) doWork(w int) {
	j := s.job
	if j.region == nil {
		s.runWavefront(w, j.blockM, j.check)
		return
	}
	r := j.region
	m := 0.0
	if s.mstep != nil {
		// Heterogeneous media: every physical ghost is set at the step's
		// start (advance), the runs need nothing else.
		for _, rn := range r.runs[w] {
			if d := s.mstep.Run(s.v, s.u, s.f, rn, j.check); d > m || d != d {
				m = d
			}
		}
		if j.check && (m > s.resid[w] || m != m) {
			s.resid[w] = m
		}
		return
	}
	m = s.ustep.Run(s.v, s.u, s.f, r.runs[w], r.ghosts[w], j.check)
	if j.check && (m > s.resid[w] || m != m) {
		s.resid[w] = m
	}
}

func (s *Solver) trace(ev string) {
	if s.spec.Trace != nil {
		s.spec.Trace(s.c.Rank(), ev)
	}
}

// advance does one step: exchange overlapped with the interior update, then
// the rim, then swap.
func (s *Solver) advance(check bool) error {
	if check {
		clear(s.resid)
	}
	s.trace("start")
	if s.spec.FacesInTime {
		if err := s.setFaces(s.simTime); err != nil {
			return err
		}
	}
	if s.spec.SourceAt != nil {
		if err := s.refreshSource(s.simTime, 0); err != nil {
			return err
		}
	}
	if s.mstep != nil {
		operator.ApplyFaces(s.faces, s.u)
	}
	if err := s.plan.Start(s.u); err != nil {
		return err
	}
	t0 := time.Now()
	s.update(&s.inner, check)
	s.stats.Compute += time.Since(t0)
	s.trace("interior")
	if err := s.plan.Finish(s.u); err != nil {
		return err
	}
	s.trace("finish")
	t1 := time.Now()
	s.update(&s.rim, check)
	s.stats.Compute += time.Since(t1)
	s.trace("rim")
	if s.acct != nil {
		dt := s.spec.DT
		if s.step == s.spec.Steps-1 {
			dt = s.spec.LastDT()
		}
		operator.ApplyFaces(s.faces, s.u) // the ghosts the step read (the kernels set some in registers only)
		s.account(s.u, 1, dt)
	}
	s.u, s.v = s.v, s.u
	s.step++
	if s.spec.Equation == Heat {
		s.simTime = s.spec.timeAt(s.step)
	}
	return nil
}

// Run advances until spec.Steps (counted from step 0, so a restarted solver
// runs the remainder), Jacobi convergence, or ctx cancellation (then
// ErrStopped). Checks fall on every CheckEvery-th step and the last one:
// one Allreduce of the max-norm of the update (the same on every split) and
// of the stop request, so every rank stops on the same step.
func (s *Solver) Run(ctx context.Context) error { return s.RunTo(ctx, s.spec.Steps) }

// RunTo is Run, pausing after step target (for a checkpoint). Where checks
// fall does not depend on target, so pausing never changes the result.
func (s *Solver) RunTo(ctx context.Context, target int) error {
	target = min(target, s.spec.Steps)
	if s.mg != nil {
		return s.runMG(ctx, target)
	}
	for s.step < target && !s.converged {
		// Checks fall on every CheckEvery-th step and the last; a block of
		// temporal steps ends at the next check, target or end.
		nextCheck := min((s.step/s.spec.CheckEvery+1)*s.spec.CheckEvery, s.spec.Steps)
		m := min(s.spec.Ghost, nextCheck-s.step, target-s.step)
		if s.spec.Equation == Heat && s.spec.TEnd > 0 {
			// The last step, shortened to end at TEnd, runs on its own.
			if s.step == s.spec.Steps-1 {
				m = 1
				s.shorten(s.spec.LastDT())
			} else {
				m = min(m, s.spec.Steps-1-s.step)
			}
		}
		check := s.step+m == nextCheck
		var err error
		if s.spec.Ghost == 1 {
			err = s.advance(check)
		} else {
			err = s.block(m, check)
		}
		if err != nil {
			return err
		}
		if !check {
			continue
		}
		local := 0.0
		for _, m := range s.resid {
			if m > local || m != m {
				local = m
			}
		}
		stop := 0.0
		if ctx.Err() != nil {
			stop = 1
		}
		in := []float64{local, stop}
		out := make([]float64, 2)
		t0 := time.Now()
		if err := s.c.Allreduce(comm.Max, in, out); err != nil {
			return err
		}
		s.stats.Reduce += time.Since(t0)
		s.stats.Checks++
		s.residual = out[0]
		if math.IsNaN(s.residual) || math.IsInf(s.residual, 0) {
			return &DivergedError{Step: s.step, What: fmt.Sprintf("max |Δu| = %v", s.residual)}
		}
		if s.spec.Equation == Poisson && s.residual < s.spec.Tolerance {
			s.converged = true
		}
		if s.spec.OnCheck != nil {
			s.spec.OnCheck(s.step, s.residual)
		}
		if out[1] != 0 {
			return ErrStopped
		}
	}
	return nil
}

// Restore sets the state of a field loaded into Field from a checkpoint
// written at step: the step count (and with it the simulated time), the
// residual and convergence then recorded, and the multigrid cycles done
// to then (the report's cycles and cycles per step).
func (s *Solver) Restore(step int, residual float64, converged bool, cycles int) {
	s.step = step
	s.residual = residual
	s.converged = converged
	s.cycles = cycles
	if s.spec.Equation == Heat {
		s.simTime = s.spec.timeAt(step)
	}
}

// Done reports whether the run is over: all steps done, converged, or (a
// multigrid solve) stalled at the rounding floor.
func (s *Solver) Done() bool { return s.step >= s.spec.Steps || s.converged || s.stalled || s.ended() }

// Stalled reports whether multigrid cycles stopped reducing the residual
// above the tolerance (see stalled).
func (s *Solver) Stalled() bool { return s.stalled }

// Step is the number of steps (iterations) done.
func (s *Solver) Step() int { return s.step }

// SimTime is the simulated time reached (heat; 0 for Poisson).
func (s *Solver) SimTime() float64 { return s.simTime }

// Residual is the max-norm of the update at the last check.
func (s *Solver) Residual() float64 { return s.residual }

// Converged reports whether Jacobi reached the tolerance.
func (s *Solver) Converged() bool { return s.converged }

// Grid is the decomposition.
func (s *Solver) Grid() *decomp.Grid { return s.grid }

// Layout is this rank's storage layout.
func (s *Solver) Layout() decomp.Layout { return s.lay }

// Field is this rank's current field, ghosts included (see Layout).
func (s *Solver) Field() []float64 { return s.u }

// EachRow calls f(p, row) for every row of the box's current field (in
// media every run of a row between insulating holes: a hole keeps its
// first value, which is no value of the medium's), part
// p (< Parts) over the rows the step updates in that part, in parallel:
// each row is still in its worker's cache (a serial pass for diagnostics
// every 10 steps pulled half of a 256² field from the other core and took
// a 2-thread run 40% of its wall time).
func (s *Solver) EachRow(f func(p int, row []float64)) {
	u := s.u
	var k []float64
	if s.media != nil {
		k = s.media.K
	}
	s.team.Run(s.parts, func(p int) {
		for _, r := range [2]*region{&s.inner, &s.rim} {
			for _, rw := range r.rows[r.share[p]:r.share[p+1]] {
				if k == nil {
					f(p, u[rw.Start:rw.Start+rw.N])
					continue
				}
				// The runs of the row that are not holes.
				for j := rw.Start; j < rw.Start+rw.N; {
					for j < rw.Start+rw.N && k[j] == 0 {
						j++
					}
					e := j
					for e < rw.Start+rw.N && k[e] != 0 {
						e++
					}
					if e > j {
						f(p, u[j:e])
					}
					j = e
				}
			}
		}
	})
}

// Parts is how many parts the workers split a sweep into (EachRow's p).
func (s *Solver) Parts() int { return s.parts }

// Stats are this rank's counters so far.
func (s *Solver) Stats() Stats {
	st := s.stats
	hs := s.plan.Stats()
	if s.mg != nil {
		hs = s.mg.HaloStats()
	}
	st.HaloWait, st.Messages, st.Bytes = hs.Wait, hs.Messages, hs.Bytes
	return st
}

// Threads is the number of worker goroutines of this rank.
func (s *Solver) Threads() int { return s.spec.Threads }

// KernelName is the name of the kernel set this build and CPU use:
// "generic", "avx2" or "avx512".
func KernelName() string { return operator.KernelName() }
