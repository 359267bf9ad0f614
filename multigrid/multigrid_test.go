package multigrid

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/decomp"
	"heat/internal/team"
	"heat/operator"
	"heat/plan"
	"heat/stencil"
)

// setup is one multigrid solve of σu − β∇²u = b on a decomposed grid.
type setup struct {
	shape   []int
	length  []float64 // nil: 1 per axis
	faces   [][2]operator.Face
	op      Operator
	rhs     func(x []float64) float64 // b at a cell centre
	ranks   int
	threads int
	dims    []int
	opt     Options
	fmg     bool    // start with one FMG cycle
	tol     float64 // relative residual to stop at
	cycles  int     // cycle cap
}

// outcome is what a solve gives: the field in C order, the relative
// residual after each cycle, the fine cell size.
type outcome struct {
	field   []float64
	history []float64
	stats   Stats
}

func (o outcome) sha() string {
	h := sha256.New()
	var b [8]byte
	for _, x := range o.field {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// factor is the geometric mean of the residual reduction per cycle over the
// history, ignoring the first cycle (which removes the smooth start).
func (o outcome) factor() float64 {
	h := o.history
	if len(h) < 3 {
		return math.Pow(h[len(h)-1], 1/float64(len(h)))
	}
	return math.Pow(h[len(h)-1]/h[0], 1/float64(len(h)-1))
}

func faces(nd int, kind operator.BC, value float64) [][2]operator.Face {
	f := make([][2]operator.Face, nd)
	for a := range f {
		f[a] = [2]operator.Face{{Kind: kind, Value: value}, {Kind: kind, Value: value}}
	}
	return f
}

func solve(t testing.TB, s setup) outcome {
	t.Helper()
	nd := len(s.shape)
	if s.length == nil {
		s.length = slices.Repeat([]float64{1}, nd)
	}
	if s.ranks == 0 {
		s.ranks = 1
	}
	if s.threads == 0 {
		s.threads = 1
	}
	if s.cycles == 0 {
		s.cycles = 30
	}
	periodic := make([]bool, nd)
	for a, f := range s.faces {
		periodic[a] = f[0].Kind == operator.Periodic
	}
	cells := 1
	for _, n := range s.shape {
		cells *= n
	}
	out := outcome{field: make([]float64, cells)}
	err := local.Run(s.ranks, func(c comm.Comm) error {
		topo, err := decomp.New(s.shape, c.Size(), s.dims, periodic)
		if err != nil {
			return err
		}
		tm := team.New(s.threads, false)
		defer tm.Close()
		m, err := New(c, topo, Problem{Shape: s.shape, Length: s.length, Faces: s.faces, Op: s.op}, s.opt, tm)
		if err != nil {
			return err
		}
		lay := m.Layout()
		b := m.RHS()
		x := make([]float64, nd)
		idx := make([]int, nd)
		lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: lay.N}, func(start, n int) {
			lay.Coords(start, idx)
			for j := range n {
				for a := range nd {
					g := lay.Box.Lo[a] + idx[a]
					if a == nd-1 {
						g += j
					}
					x[a] = (float64(g) + 0.5) * s.length[a] / float64(s.shape[a])
				}
				b[start+j] = s.rhs(x)
			}
		})
		if err := m.Compatible(); err != nil {
			return err
		}
		ref, err := m.RHSNorm()
		if err != nil {
			return err
		}
		var hist []float64
		for cy := range s.cycles {
			var res float64
			if s.fmg && cy == 0 {
				res, err = m.FMG()
			} else {
				res, err = m.Cycle()
			}
			if err != nil {
				return err
			}
			hist = append(hist, res/ref)
			if res/ref < s.tol {
				break
			}
		}
		u := m.Field()
		lay.ForRows(decomp.Box{Lo: make([]int, nd), Hi: lay.N}, func(start, n int) {
			lay.Coords(start, idx)
			g := 0
			for a := range nd {
				g = g*s.shape[a] + lay.Box.Lo[a] + idx[a]
			}
			copy(out.field[g:g+n], u[start:start+n])
		})
		if c.Rank() == 0 {
			out.history = hist
			out.stats = m.Stats()
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// sineProblem is −∇²u = b with u = Π sin(k_a π x_a) (mode k per axis) on
// zero Dirichlet faces, or on periodic faces for even k: b = π²Σk²·u.
func sineProblem(shape []int, k int, kind operator.BC) (setup, func(x []float64) float64) {
	nd := len(shape)
	exact := func(x []float64) float64 {
		p := 1.0
		for _, xa := range x {
			p *= math.Sin(float64(k) * math.Pi * xa)
		}
		return p
	}
	lam := float64(nd) * float64(k*k) * math.Pi * math.Pi
	return setup{
		shape: shape, faces: faces(nd, kind, 0), op: Operator{Sigma: 0, Beta: 1},
		rhs: func(x []float64) float64 { return lam * exact(x) },
	}, exact
}

// cosProblem is −∇²u = b with u = Π cos(π x_a) on zero-flux (Neumann) faces.
func cosProblem(shape []int) (setup, func(x []float64) float64) {
	nd := len(shape)
	exact := func(x []float64) float64 {
		p := 1.0
		for _, xa := range x {
			p *= math.Cos(math.Pi * xa)
		}
		return p
	}
	lam := float64(nd) * math.Pi * math.Pi
	return setup{
		shape: shape, faces: faces(nd, operator.Neumann, 0), op: Operator{Sigma: 0, Beta: 1},
		rhs: func(x []float64) float64 { return lam * exact(x) },
	}, exact
}

// maxError is max |u − exact| over the cell centres.
func maxError(shape []int, u []float64, exact func(x []float64) float64) float64 {
	nd := len(shape)
	x := make([]float64, nd)
	e := 0.0
	for i, v := range u {
		rem := i
		for a := nd - 1; a >= 0; a-- {
			x[a] = (float64(rem%shape[a]) + 0.5) / float64(shape[a])
			rem /= shape[a]
		}
		e = max(e, math.Abs(v-exact(x)))
	}
	return e
}

// The solve converges to the discretisation error, which falls about 4×
// per halving of h: Dirichlet, Neumann (mean fixed) and periodic, 2D and 3D.
func TestManufacturedSolutionsSecondOrder(t *testing.T) {
	type mk func(shape []int) (setup, func([]float64) float64)
	cases := []struct {
		name string
		mk   mk
		// The exact solution's mean: the solver fixes a singular problem's
		// mean at zero.
	}{
		{"dirichlet", func(s []int) (setup, func([]float64) float64) { return sineProblem(s, 1, operator.Dirichlet) }},
		{"periodic", func(s []int) (setup, func([]float64) float64) { return sineProblem(s, 2, operator.Periodic) }},
		{"neumann", cosProblem},
	}
	for _, c := range cases {
		for _, nd := range []int{2, 3} {
			sizes := []int{16, 32, 64}
			if nd == 3 {
				sizes = []int{8, 16, 32}
			}
			var errs []float64
			for _, n := range sizes {
				shape := slices.Repeat([]int{n}, nd)
				s, exact := c.mk(shape)
				s.tol = 1e-10
				s.ranks = 2
				out := solve(t, s)
				require.Less(t, out.history[len(out.history)-1], 1e-10, "%s %v: not converged: %v", c.name, shape, out.history)
				errs = append(errs, maxError(shape, out.field, exact))
			}
			for i := 1; i < len(errs); i++ {
				ratio := errs[i-1] / errs[i]
				t.Logf("%s %dD: error %.3e → %.3e, ratio %.2f", c.name, nd, errs[i-1], errs[i], ratio)
				require.InDelta(t, 4, ratio, 0.6, "%s %dD: error ratio per halving of h", c.name, nd)
			}
		}
	}
}

// Every V-cycle reduces the residual by at least 0.15 (the geometric mean
// over the solve), with each smoother, on power-of-two, non-power-of-two
// and odd shapes (an odd axis is not halved: its hierarchy stops early and
// the bottom solver takes a larger grid), Dirichlet and periodic.
func TestConvergenceFactorPerVCycle(t *testing.T) {
	shapes := [][]int{{64, 64}, {96, 80}, {64, 128}, {75, 100}, {32, 32, 32}, {24, 40, 32}, {20, 15, 16}}
	for _, shape := range shapes {
		for _, kind := range []operator.BC{operator.Dirichlet, operator.Periodic} {
			for _, sm := range []Smoother{Chebyshev, RedBlack} {
				s, _ := sineProblem(shape, 2, kind)
				s.opt.Smoother = sm
				s.tol = 1e-10
				s.ranks = 2
				out := solve(t, s)
				where := fmt.Sprintf("%v %v %v: %d cycles, levels %v", shape, kind, sm, len(out.history), out.stats.Shapes)
				t.Logf("%s: factor %.3f", where, out.factor())
				require.Less(t, out.history[len(out.history)-1], 1e-10, where)
				require.LessOrEqual(t, out.factor(), 0.15, where)
				require.LessOrEqual(t, len(out.history), 14, where)
			}
		}
	}
}

// The field and the cycle count are the same bits on every rank count,
// process grid (uneven splits included) and thread count, for both
// smoothers, V and W cycles and FMG, 2D and 3D, and for the Helmholtz
// operator of an implicit heat step.
func TestBitForBitAcrossSplits(t *testing.T) {
	type split struct {
		ranks, threads int
		dims           []int
	}
	splits2 := []split{{1, 1, nil}, {2, 2, nil}, {3, 1, nil}, {4, 3, []int{4, 1}}, {6, 2, []int{2, 3}}, {8, 1, []int{2, 4}}, {3, 3, []int{1, 3}}, {8, 2, []int{8, 1}}}
	splits3 := []split{{1, 1, nil}, {2, 3, nil}, {3, 1, []int{1, 3, 1}}, {4, 2, []int{2, 1, 2}}, {6, 1, nil}, {8, 2, []int{2, 2, 2}}, {4, 1, []int{1, 4, 1}}}
	type variant struct {
		name string
		edit func(s *setup)
	}
	// Most variants keep the coarse levels distributed down to boxes of 2
	// cells (GatherBelow 2), so that the restriction and prolongation
	// between ranks' boxes are exercised; one gathers at the default; two
	// agglomerate, neighbours' boxes merged stage by stage: one level
	// after another (GatherBelow 6), or the fine level itself onto ever
	// fewer ranks (GatherBelow 1000).
	variants := []variant{
		{"chebyshev V", func(s *setup) { s.opt.GatherBelow = 2 }},
		{"chebyshev V, default gathering", func(s *setup) {}},
		{"chebyshev F, agglomerated level by level", func(s *setup) { s.opt.Cycle, s.opt.GatherBelow, s.opt.GatherCells = F, 6, 16 }},
		{"FMG, fine level agglomerated", func(s *setup) { s.fmg, s.opt.GatherBelow, s.opt.GatherCells = true, 1000, 16 }},
		{"rbgs V", func(s *setup) { s.opt.Smoother, s.opt.GatherBelow = RedBlack, 2 }},
		{"jacobi W", func(s *setup) { s.opt.Smoother, s.opt.Cycle, s.opt.GatherBelow = Jacobi, W, 2 }},
		{"chebyshev F", func(s *setup) { s.opt.Cycle, s.opt.GatherBelow = F, 2 }},
		{"FMG constant", func(s *setup) { s.fmg, s.opt.Constant, s.opt.GatherBelow = true, true, 2 }},
		{"helmholtz", func(s *setup) { s.op, s.opt.GatherBelow = Operator{Sigma: 1, Beta: 0.003}, 2 }},
	}
	// 23×45 cannot be coarsened: its one level is solved by CG on rank 0.
	for _, shape := range [][]int{{48, 66}, {16, 18, 24}, {23, 45}} {
		nd := len(shape)
		splits := splits2
		if nd == 3 {
			splits = splits3
		}
		for _, v := range variants {
			s, _ := sineProblem(shape, 1, operator.Dirichlet)
			// Mixed faces: a Dirichlet value, Neumann, periodic.
			s.faces[0] = [2]operator.Face{{Kind: operator.Dirichlet, Value: 0.5}, {Kind: operator.Neumann}}
			s.faces[nd-1] = [2]operator.Face{{Kind: operator.Periodic}, {Kind: operator.Periodic}}
			s.rhs = func(x []float64) float64 { return math.Exp(x[0]) * math.Cos(2*math.Pi*x[nd-1]) }
			s.tol = 1e-6
			v.edit(&s)
			var want, out outcome
			for i, sp := range splits {
				s.ranks, s.threads, s.dims = sp.ranks, sp.threads, sp.dims
				out = solve(t, s)
				if i == 0 {
					want = out
					continue
				}
				where := fmt.Sprintf("%v %s on %+v", shape, v.name, sp)
				require.Equal(t, len(want.history), len(out.history), where)
				require.Equal(t, want.sha(), out.sha(), where)
			}
			t.Logf("%v %s: %d cycles; on %v ranks, the levels %v on %v ranks", shape, v.name, len(want.history), s.dims, out.stats.Shapes, out.stats.Ranks)
		}
	}
}

// One FMG cycle reaches the discretisation error (within a factor 2 of
// the converged solution's), in 2D and 3D.
func TestFMGReachesDiscretisationError(t *testing.T) {
	for _, shape := range [][]int{{128, 128}, {32, 32, 32}} {
		s, exact := sineProblem(shape, 1, operator.Dirichlet)
		s.tol = 1e-12
		conv := solve(t, s)
		s.fmg, s.cycles = true, 1
		one := solve(t, s)
		e, e1 := maxError(shape, conv.field, exact), maxError(shape, one.field, exact)
		t.Logf("%v: discretisation error %.3e, after one FMG cycle %.3e (residual %.2e)", shape, e, e1, one.history[0])
		require.Less(t, e1, 2*e, "%v", shape)
	}
}

// A periodic or pure Neumann Poisson problem whose source does not
// integrate to zero has no solution, and is refused; with a Dirichlet face
// the same source is fine.
func TestIncompatibleSourceRefused(t *testing.T) {
	for _, kind := range []operator.BC{operator.Periodic, operator.Neumann} {
		s, _ := sineProblem([]int{32, 32}, 1, kind) // sin(πx)sin(πy) > 0 everywhere
		s.ranks = 2
		err := local.Run(1, func(c comm.Comm) error { return nil })
		require.NoError(t, err)
		var ie *IncompatibleError
		func() {
			defer func() { require.Nil(t, recover()) }()
			nd := 2
			periodic := []bool{kind == operator.Periodic, kind == operator.Periodic}
			err = local.Run(s.ranks, func(c comm.Comm) error {
				topo, err := decomp.New(s.shape, c.Size(), nil, periodic)
				if err != nil {
					return err
				}
				tm := team.New(1, false)
				defer tm.Close()
				m, err := New(c, topo, Problem{Shape: s.shape, Length: []float64{1, 1}, Faces: s.faces, Op: s.op}, s.opt, tm)
				if err != nil {
					return err
				}
				b := m.RHS()
				for _, r := range m.levels[0].rows {
					for j := range r.N {
						b[r.Start+j] = 1 + float64(nd)
					}
				}
				return m.Compatible()
			})
		}()
		require.ErrorAs(t, err, &ie, "%v", kind)
		require.InDelta(t, 3, ie.Mean, 1e-12)
	}
	s, _ := sineProblem([]int{32, 32}, 1, operator.Dirichlet)
	s.tol = 1e-10
	out := solve(t, s)
	require.Less(t, out.history[len(out.history)-1], 1e-10)
}

// A level count the shape cannot have is refused, naming the limit.
func TestTooManyLevelsRefused(t *testing.T) {
	require.Len(t, plan.Hierarchy([]int{64, 64}, []float64{1, 1}, 0), 5) // 64, 32, 16, 8, 4
	require.Len(t, plan.Hierarchy([]int{75, 100}, []float64{1, 1}, 0), 2)
	err := local.Run(1, func(c comm.Comm) error {
		topo, _ := decomp.New([]int{64, 64}, 1, nil, nil)
		tm := team.New(1, false)
		defer tm.Close()
		_, err := New(c, topo, Problem{Shape: []int{64, 64}, Length: []float64{1, 1}, Faces: faces(2, operator.Dirichlet, 0), Op: Operator{Beta: 1}}, Options{Levels: 6}, tm)
		return err
	})
	require.ErrorContains(t, err, "at most 5 levels")
}

// Every kernel set of the build (generic, and the SIMD sets the CPU runs)
// gives a solve the same bits.
func TestSameBitsWithEveryKernelSet(t *testing.T) {
	sets := stencil.Available()
	if len(sets) == 1 {
		t.Skipf("only the %s set in this build", sets[0].Name)
	}
	for _, shape := range [][]int{{40, 52}, {16, 12, 20}} {
		s, _ := sineProblem(shape, 1, operator.Dirichlet)
		s.faces[0][1] = operator.Face{Kind: operator.Neumann}
		s.tol, s.ranks, s.threads = 1e-9, 2, 2
		var want outcome
		for i, ks := range sets {
			restore := stencil.Use(ks)
			out := solve(t, s)
			restore()
			if i == 0 {
				want = out
				continue
			}
			require.Equal(t, want.sha(), out.sha(), "%v: %s vs %s", shape, ks.Name, sets[0].Name)
			require.Equal(t, len(want.history), len(out.history))
		}
	}
}
