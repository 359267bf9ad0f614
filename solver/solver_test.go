package solver

import (
	"context"
	"fmt"
	"heat/operator"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/io/report"
)

// outcome is what rank 0 saw at the end of a run.
type outcome struct {
	field     []float64
	steps     int
	converged bool
	residual  float64
	messages  int64 // halo messages rank 0 sent
	info      SolverInfo
	energy    *EnergyBalance // heat: the energy account (nil where none is kept)
	simTime   float64
	ctl       *Controller // steps that choose themselves: the controller at the end
}

// run solves spec on ranks in-process ranks and returns rank 0's view.
func run(t testing.TB, ranks int, spec Spec) outcome {
	t.Helper()
	var out outcome
	err := local.Run(ranks, func(c comm.Comm) error {
		s, err := New(c, spec)
		if err != nil {
			return err
		}
		defer s.Close()
		if err := s.Run(context.Background()); err != nil {
			return err
		}
		f, err := s.Gather()
		if err != nil {
			return err
		}
		e, err := s.Energy()
		if err != nil {
			return err
		}
		if c.Rank() == 0 {
			out = outcome{f, s.Step(), s.Converged(), s.Residual(), s.Stats().Messages, s.Info(), e, s.SimTime(), s.Controller()}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// fingerprint is the run report's field.sha256 of a gathered field.
func fingerprint(f []float64) string { return report.Summarise(f, true).SHA256 }

func faces(nd int, f Face) [][2]Face {
	out := make([][2]Face, nd)
	for a := range out {
		out[a] = [2]Face{f, f}
	}
	return out
}

func ones(nd int) []float64 {
	l := make([]float64, nd)
	for a := range l {
		l[a] = 1
	}
	return l
}

func heatSpec(shape []int) Spec {
	nd := len(shape)
	s := Spec{Shape: shape, Length: ones(nd), Ghost: 1, Equation: Heat, Alpha: 1,
		CheckEvery: 10, Faces: faces(nd, Face{Kind: Dirichlet}), Threads: 1}
	s.DT = 0.9 * operator.NewUniform(s.Alpha, s.Spacing()).StableDT()
	return s
}

// cellCentres calls f with the centre of every global cell in C order.
func cellCentres(shape []int, length []float64, f func(i int, x []float64)) {
	nd := len(shape)
	idx := make([]int, nd)
	x := make([]float64, nd)
	total := 1
	for _, n := range shape {
		total *= n
	}
	for i := range total {
		for a := range nd {
			x[a] = (float64(idx[a]) + 0.5) * length[a] / float64(shape[a])
		}
		f(i, x)
		for a := nd - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < shape[a] {
				break
			}
			idx[a] = 0
		}
	}
}

// A sine mode with zero Dirichlet faces decays as exp(−α·|k|²·t); the error
// falls about 4× when h halves (dt ∝ h²): second order in space and time.
func TestHeatSineModeDecaysAtExactRate(t *testing.T) {
	for _, nd := range []int{2, 3} {
		mode := []int{1, 2, 1}[:nd]
		var errs []float64
		sizes := []int{8, 16, 32}
		if nd == 2 {
			sizes = []int{16, 32, 64}
		}
		for _, n := range sizes {
			shape := slices.Repeat([]int{n}, nd)
			s := heatSpec(shape)
			s.DT = 0.25 * operator.NewUniform(s.Alpha, s.Spacing()).StableDT()
			const T = 0.01
			s.Steps = int(math.Round(T / s.DT))
			s.DT = T / float64(s.Steps)
			s.Initial = Sine(mode, s.Length, 1, 0)
			s.Threads = 2
			out := run(t, 4, s)
			k2 := 0.0
			for _, m := range mode {
				k2 += float64(m*m) * math.Pi * math.Pi
			}
			decay := math.Exp(-s.Alpha * k2 * T)
			maxErr := 0.0
			cellCentres(shape, s.Length, func(i int, x []float64) {
				want := decay * Sine(mode, s.Length, 1, 0)(x, nil)
				maxErr = max(maxErr, math.Abs(out.field[i]-want))
			})
			errs = append(errs, maxErr)
		}
		for i := 1; i < len(errs); i++ {
			ratio := errs[i-1] / errs[i]
			require.InDelta(t, 4, ratio, 0.4, "%dD errors %v", nd, errs)
		}
		require.Less(t, errs[len(errs)-1], 2e-3)
	}
}

// Jacobi on ∇²u = f with the manufactured solution u = Π sin(πx) converges
// to the discrete solution, whose error against u falls ~4× when h halves.
func TestPoissonManufacturedSolutionSecondOrder(t *testing.T) {
	for _, nd := range []int{2, 3} {
		var errs []float64
		for _, n := range []int{8, 16, 32} {
			if nd == 3 && n == 32 {
				continue
			}
			shape := slices.Repeat([]int{n}, nd)
			mode := slices.Repeat([]int{1}, nd)
			s := heatSpec(shape)
			s.Equation = Poisson
			s.Steps = 200000
			s.Tolerance = 1e-11
			s.Initial = Constant(0)
			exact := Sine(mode, s.Length, 1, 0)
			s.Source = Sine(mode, s.Length, -float64(nd)*math.Pi*math.Pi, 0)
			s.Threads = 2
			out := run(t, 3, s)
			require.True(t, out.converged, "n=%d did not converge (residual %g after %d)", n, out.residual, out.steps)
			maxErr := 0.0
			cellCentres(shape, s.Length, func(i int, x []float64) {
				maxErr = max(maxErr, math.Abs(out.field[i]-exact(x, nil)))
			})
			errs = append(errs, maxErr)
		}
		for i := 1; i < len(errs); i++ {
			require.InDelta(t, 4, errs[i-1]/errs[i], 0.5, "%dD errors %v", nd, errs)
		}
	}
}

// With periodic or zero-flux faces and no source, the total heat is conserved.
func TestHeatConservedWithPeriodicAndNeumannFaces(t *testing.T) {
	for _, shape := range [][]int{{30, 26}, {10, 12, 9}} {
		for _, kind := range []BC{Periodic, Neumann} {
			nd := len(shape)
			s := heatSpec(shape)
			s.Faces = faces(nd, Face{Kind: kind})
			if kind == Neumann && nd == 3 {
				s.Faces[1] = [2]Face{{Kind: Periodic}, {Kind: Periodic}}
			}
			s.Initial = Random(shape, 7, 1, 0.5)
			s.Steps = 300
			total := func(f []float64) float64 {
				sum := 0.0
				for _, x := range f {
					sum += x
				}
				return sum
			}
			before := run(t, 1, Spec{Shape: s.Shape, Length: s.Length, Ghost: 1, Equation: Heat, Alpha: 1, DT: s.DT,
				CheckEvery: 1, Faces: s.Faces, Initial: s.Initial, Threads: 1})
			_ = before
			init := make([]float64, len(before.field))
			cellCentres(shape, s.Length, func(i int, x []float64) {
				idx := unflatten(shape, i)
				init[i] = s.Initial(x, idx)
			})
			out := run(t, 4, s)
			require.InDelta(t, 0, (total(out.field)-total(init))/total(init), 1e-12, "%v %v", shape, kind)
			// And it actually diffused.
			require.Less(t, spread(out.field), 0.5*spread(init))
		}
	}
}

func unflatten(shape []int, i int) []int {
	idx := make([]int, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		idx[a] = i % shape[a]
		i /= shape[a]
	}
	return idx
}

func spread(f []float64) float64 { return slices.Max(f) - slices.Min(f) }

// The field's bits do not depend on the rank count, the process grid or the
// thread count, for heat and for Poisson (which also stops on the same
// iteration).
func TestBitForBitAcrossSplits(t *testing.T) {
	type split struct {
		ranks   int
		dims    []int
		threads int
	}
	for _, shape := range [][]int{{23, 19}, {9, 11, 10}} {
		nd := len(shape)
		// Every rank count and thread count, not every pair of them
		// (the race suite's time): each thread count meets several
		// rank counts, each rank count one or two thread counts.
		var splits []split
		for _, rt := range [][2]int{{1, 1}, {1, 3}, {2, 2}, {2, 3}, {3, 1}, {3, 3}, {4, 2}, {6, 1}, {6, 3}} {
			splits = append(splits, split{rt[0], nil, rt[1]})
		}
		if nd == 2 {
			splits = append(splits, split{4, []int{4, 1}, 2}, split{4, []int{1, 4}, 1}, split{6, []int{2, 3}, 3}, split{6, []int{6, 1}, 1})
		} else {
			splits = append(splits, split{4, []int{1, 2, 2}, 2}, split{4, []int{4, 1, 1}, 1}, split{6, []int{3, 1, 2}, 3}, split{6, []int{1, 6, 1}, 1})
		}
		for _, eq := range []Equation{Heat, Poisson} {
			s := heatSpec(shape)
			s.Equation = eq
			// Mixed faces: hot Dirichlet, zero flux, periodic.
			s.Faces[0] = [2]Face{{Kind: Dirichlet, Value: 1}, {Kind: Neumann}}
			s.Faces[nd-1] = [2]Face{{Kind: Periodic}, {Kind: Periodic}}
			s.Initial = Random(shape, 3, 1, 0)
			s.Source = Gaussian([]float64{0.3, 0.6, 0.5}[:nd], 0.2, 2, 0)
			s.Steps = 57
			s.CheckEvery = 5
			if eq == Poisson {
				s.Steps = 8000
				s.Tolerance = 1e-6
			}
			var want string
			var wantSteps int
			for i, sp := range splits {
				s.Dims, s.Threads = sp.dims, sp.threads
				out := run(t, sp.ranks, s)
				got := fingerprint(out.field)
				if i == 0 {
					want, wantSteps = got, out.steps
					if eq == Poisson {
						require.True(t, out.converged)
						require.Less(t, out.steps, s.Steps)
					}
					continue
				}
				require.Equal(t, want, got, "%v %v split %+v", shape, eq, sp)
				require.Equal(t, wantSteps, out.steps, "%v %v split %+v", shape, eq, sp)
			}
		}
	}
}

// holdBack delays every message until its sender waits for it, so receivers
// can only complete after their neighbours reached Finish.
type holdBack struct {
	comm.Comm
	mu   sync.Mutex
	held []func() error
}

type heldReq struct{ r comm.Request }

func (h *heldReq) Done() bool { return h.r != nil && h.r.Done() }

func (h *holdBack) Isend(buf []float64, dest, tag int) (comm.Request, error) {
	hr := &heldReq{}
	h.mu.Lock()
	h.held = append(h.held, func() error {
		r, err := h.Comm.Isend(buf, dest, tag)
		hr.r = r
		return err
	})
	h.mu.Unlock()
	return hr, nil
}

func (h *holdBack) Waitall(reqs []comm.Request) error {
	h.mu.Lock()
	held := h.held
	h.held = nil
	h.mu.Unlock()
	for _, f := range held {
		if err := f(); err != nil {
			return err
		}
	}
	inner := make([]comm.Request, 0, len(reqs))
	for _, r := range reqs {
		if hr, ok := r.(*heldReq); ok {
			inner = append(inner, hr.r)
		} else {
			inner = append(inner, r)
		}
	}
	return h.Comm.Waitall(inner)
}

// The interior is updated between Start and Finish of the exchange, the rim
// after Finish: the order of events on every rank, every step.
func TestInteriorOverlapsExchange(t *testing.T) {
	const ranks, steps = 4, 6
	var mu sync.Mutex
	events := make([][]string, ranks)
	s := heatSpec([]int{20, 20})
	s.Initial = Random(s.Shape, 1, 1, 0)
	s.Steps = steps
	s.Threads = 2
	s.Trace = func(rank int, ev string) {
		mu.Lock()
		events[rank] = append(events[rank], ev)
		mu.Unlock()
	}
	plain := run(t, ranks, Spec{Shape: s.Shape, Length: s.Length, Ghost: 1, Equation: Heat, Alpha: 1, DT: s.DT,
		CheckEvery: s.CheckEvery, Faces: s.Faces, Initial: s.Initial, Steps: steps, Threads: 2})
	var got []float64
	err := local.Run(ranks, func(c comm.Comm) error {
		sv, err := New(&holdBack{Comm: c}, s)
		if err != nil {
			return err
		}
		defer sv.Close()
		if err := sv.Run(context.Background()); err != nil {
			return err
		}
		f, err := sv.Gather()
		if c.Rank() == 0 {
			got = f
		}
		return err
	})
	require.NoError(t, err)
	require.Equal(t, fingerprint(plain.field), fingerprint(got), "held-back messages change nothing")
	want := slices.Repeat([]string{"start", "interior", "finish", "rim"}, steps)
	for r := range ranks {
		require.Equal(t, want, events[r], "rank %d", r)
	}
}

// Cancelling the context stops every rank on the same step.
func TestRunStopsOnCancel(t *testing.T) {
	s := heatSpec([]int{16, 16})
	s.Initial = Constant(1)
	s.Steps = 1000000
	s.CheckEvery = 3
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	stepsSeen := map[int]int{}
	s.OnCheck = func(step int, _ float64) {
		if step >= 30 {
			cancel()
		}
	}
	err := local.Run(3, func(c comm.Comm) error {
		sv, err := New(c, s)
		if err != nil {
			return err
		}
		defer sv.Close()
		err = sv.Run(ctx)
		mu.Lock()
		stepsSeen[sv.Step()]++
		mu.Unlock()
		if err != ErrStopped {
			return fmt.Errorf("rank %d: got %v, want ErrStopped", c.Rank(), err)
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, stepsSeen, 1, "all ranks stop on one step: %v", stepsSeen)
}

// An explicit step beyond the stability limit is refused.
func TestUnstableTimeStepRefused(t *testing.T) {
	s := heatSpec([]int{16, 16})
	s.Initial = Constant(0)
	s.DT = 1.01 * operator.NewUniform(1, s.Spacing()).StableDT()
	err := local.Run(1, func(c comm.Comm) error {
		_, err := New(c, s)
		return err
	})
	require.ErrorContains(t, err, "stability limit")
}

// 3D boxes with long rows are swept in y-bands (cache tiles); the bands
// change the order of the updates, never their bits.
func TestCacheTilesKeepBits(t *testing.T) {
	// Tiles for a 512 KiB L2, whatever this host has; the reference run
	// below is one box.
	defer func(v int) { tileBytes = v }(tileBytes)
	tileBytes = 256 << 10
	s := heatSpec([]int{5, 40, 1500})
	s.Initial = Random(s.Shape, 2, 1, 0)
	s.Steps = 6
	sv := &Solver{spec: s, lay: decomp.NewLayout(decomp.Box{Lo: []int{0, 0, 0}, Hi: s.Shape}, 1)}
	box := decomp.Box{Lo: []int{1, 1, 1}, Hi: []int{4, 39, 1499}}
	tiles := sv.cacheTiles(box)
	require.Greater(t, len(tiles), 4, "the test grid is tiled")
	covered := 0
	for i, tl := range tiles {
		require.Equal(t, tl, tl.Intersect(box), "tile %d inside the box", i)
		for _, other := range tiles[:i] {
			require.True(t, tl.Intersect(other).Empty(), "tiles overlap")
		}
		covered += tl.Size()
	}
	require.Equal(t, box.Size(), covered, "the tiles cover the box")
	tileBytes = 1 << 40
	s.Threads = 1
	want := fingerprint(run(t, 1, s).field)
	tileBytes = 256 << 10
	for _, sp := range [][2]int{{1, 1}, {1, 2}, {2, 3}, {4, 1}} {
		s.Threads = sp[1]
		require.Equal(t, want, fingerprint(run(t, sp[0], s).field), "tiled, ranks %d threads %d", sp[0], sp[1])
	}
}
