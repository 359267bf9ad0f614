package solver

import (
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/internal/exactsum"
	"heat/internal/team"
	"heat/stencil"
)

// globalMedia is a medium given cell by cell over the whole grid, handed
// to each rank box by box as the run would read it.
type globalMedia struct {
	shape         []int
	k, rhoC, held []float64
}

func (g *globalMedia) fn() MediaFunc {
	return func(_ comm.Comm, lo, hi []int) (k, rhoC, held []float64, err error) {
		nd := len(g.shape)
		idx := slices.Clone(lo)
		cells := 1
		for a := range nd {
			cells *= hi[a] - lo[a]
		}
		k, rhoC, held = make([]float64, 0, cells), make([]float64, 0, cells), make([]float64, 0, cells)
		for {
			i := 0
			for a := range nd {
				i = i*g.shape[a] + idx[a]
			}
			n := hi[nd-1] - lo[nd-1]
			k, rhoC, held = append(k, g.k[i:i+n]...), append(rhoC, g.rhoC[i:i+n]...), append(held, g.held[i:i+n]...)
			a := nd - 2
			for ; a >= 0; a-- {
				if idx[a]++; idx[a] < hi[a] {
					break
				}
				idx[a] = lo[a]
			}
			if a < 0 {
				return k, rhoC, held, nil
			}
		}
	}
}

// randomMedia is two materials (k 1 and 50, ρc 1 and 3) in random cells,
// with holes (k = 0) and held cells (at 2) sprinkled in: every path of the
// contract in a few cells.
func randomMedia(shape []int, seed int64, holes, heldCells bool) *globalMedia {
	total := 1
	for _, n := range shape {
		total *= n
	}
	r := Random(shape, seed, 1, 0)
	g := &globalMedia{shape: shape}
	for i := range total {
		x := r(nil, unflatten(shape, i))
		k, rc, h := 1.0, 1.0, math.NaN()
		switch {
		case x < 0.4:
			k, rc = 50, 3
		case holes && x < 0.47:
			k = 0
		case heldCells && x < 0.52:
			h = 2
		}
		g.k, g.rhoC, g.held = append(g.k, k), append(g.rhoC, rc), append(g.held, h)
	}
	return g
}

// referenceStep is one explicit step of the contract written cell by cell
// over the global grid (not the operator's code): face coefficients
// 2k_ik_j/(k_i+k_j) (k_i at a Dirichlet or Neumann face, whose ghost is
// 2g − u or u), holes and held cells left alone.
func referenceStep(g *globalMedia, u []float64, h []float64, dt float64, faces [][2]Face, src []float64) []float64 {
	nd := len(g.shape)
	out := slices.Clone(u)
	strides := make([]int, nd)
	s := 1
	for a := nd - 1; a >= 0; a-- {
		strides[a] = s
		s *= g.shape[a]
	}
	for i := range u {
		if g.k[i] == 0 || !math.IsNaN(g.held[i]) {
			continue
		}
		idx := unflatten(g.shape, i)
		flux := 0.0
		for a := range nd {
			for side := range 2 {
				dir := 2*side - 1
				j := idx[a] + dir
				var kf, nb float64
				if j < 0 || j >= g.shape[a] {
					f := faces[a][side]
					kf, nb = g.k[i], u[i]
					if f.Kind == Dirichlet {
						nb = 2*f.Value - u[i]
					}
				} else {
					n := i + dir*strides[a]
					if g.k[n] != 0 {
						kf = 2 * g.k[i] * g.k[n] / (g.k[i] + g.k[n])
					}
					nb = u[n]
				}
				flux += kf * (nb - u[i]) / (h[a] * h[a])
			}
		}
		if src != nil {
			flux += src[i]
		}
		out[i] = u[i] + dt/g.rhoC[i]*flux
	}
	return out
}

// TestMediaStepMatchesReference: one explicit step on a random
// two-material map with holes and held cells agrees with the contract
// written independently, 2D and 3D, on every kernel set.
func TestMediaStepMatchesReference(t *testing.T) {
	for _, shape := range [][]int{{9, 13}, {5, 6, 7}} {
		nd := len(shape)
		g := randomMedia(shape, 7, true, true)
		spec := heatSpec(shape)
		spec.Length = []float64{1, 1.5, 2}[:nd]
		spec.Faces = faces(nd, Face{Kind: Dirichlet, Value: 0.5})
		spec.Faces[nd-1][1] = Face{Kind: Neumann}
		spec.Media = g.fn()
		spec.DT = 1e-4
		spec.Steps = 1
		spec.Initial = Random(shape, 3, 1, 0)
		spec.Source = Random(shape, 4, 10, -5)
		h := spec.Spacing()
		u0 := make([]float64, len(g.k))
		src := make([]float64, len(g.k))
		for i := range u0 {
			idx := unflatten(shape, i)
			x := make([]float64, nd)
			for a := range nd {
				x[a] = (float64(idx[a]) + 0.5) * h[a]
			}
			u0[i] = spec.Initial(x, idx)
			src[i] = spec.Source(x, idx)
			if !math.IsNaN(g.held[i]) {
				u0[i] = g.held[i]
			}
		}
		want := referenceStep(g, u0, h, spec.DT, spec.Faces, src)
		for _, ks := range stencil.Available() {
			restore := stencil.Use(ks)
			got := run(t, 2, spec).field
			restore()
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-13*math.Abs(want[i])+1e-15, "%v %s cell %v", shape, ks.Name, unflatten(shape, i))
			}
		}
	}
}

// TestMediaBitForBit: heterogeneous explicit steps and Jacobi sweeps give
// the same bits on every split and thread count.
func TestMediaBitForBit(t *testing.T) {
	for _, shape := range [][]int{{24, 18}, {10, 12, 9}} {
		nd := len(shape)
		g := randomMedia(shape, 11, true, true)
		for _, eq := range []Equation{Heat, Poisson} {
			spec := heatSpec(shape)
			spec.Equation = eq
			spec.Media = g.fn()
			spec.DT = 0
			if eq == Poisson {
				spec.Faces = faces(nd, Face{Kind: Dirichlet, Value: 1})
				spec.Source = Constant(-3)
			}
			spec.Steps = 40
			spec.Initial = Random(shape, 5, 1, 0)
			var want string
			for _, ranks := range splitRanks {
				for _, threads := range []int{1, 2} {
					spec.Threads = threads
					got := fingerprint(run(t, ranks, spec).field)
					if want == "" {
						want = got
					}
					require.Equal(t, want, got, "%v %s ranks %d threads %d", shape, eq, ranks, threads)
				}
			}
			grids := [][]int{{4, 1}, {1, 4}, {2, 2}}
			if nd == 3 {
				grids = [][]int{{4, 1, 1}, {1, 2, 2}, {1, 1, 4}}
			}
			for _, dims := range grids {
				spec.Dims = dims
				require.Equal(t, want, fingerprint(run(t, 4, spec).field), "%v %s dims %v", shape, eq, dims)
			}
			spec.Dims = nil
			for _, ks := range stencil.Available() {
				restore := stencil.Use(ks)
				got := fingerprint(run(t, 2, spec).field)
				restore()
				require.Equal(t, want, got, "%v %s kernels %s", shape, eq, ks.Name)
			}
		}
	}
}

// TestMediaConserveHeat: with insulated faces and no source, Σ ρc·u·h^d
// stays what it was over 1000 steps, to 1e-12 (exact sums), holes and all.
func TestMediaConserveHeat(t *testing.T) {
	for _, shape := range [][]int{{20, 24}, {8, 10, 12}} {
		nd := len(shape)
		g := randomMedia(shape, 13, true, false)
		spec := heatSpec(shape)
		spec.Faces = faces(nd, Face{Kind: Neumann})
		spec.Media = g.fn()
		spec.DT = 0
		spec.Steps = 1000
		spec.Initial = Random(shape, 9, 1, 0)
		content := func(u []float64) float64 {
			var acc exactsum.Acc
			for i, v := range u {
				if g.k[i] != 0 {
					acc.Add(g.rhoC[i] * v)
				}
			}
			return acc.Float64()
		}
		start := slices.Clone(run(t, 1, Spec{Shape: shape, Length: spec.Length, Ghost: 1, Equation: Heat, Alpha: 1,
			Faces: spec.Faces, Media: spec.Media, Initial: spec.Initial, Steps: 0, CheckEvery: 1, Threads: 1}).field)
		end := run(t, 3, spec).field
		c0, c1 := content(start), content(end)
		require.InDelta(t, c0, c1, 1e-12*math.Abs(c0))
		conducting := func(u []float64) []float64 {
			var out []float64
			for i, v := range u {
				if g.k[i] != 0 {
					out = append(out, v)
				}
			}
			return out
		}
		require.Greater(t, spread(conducting(start)), 2*spread(conducting(end)), "the field evened out")
	}
}

// TestLayeredMediumSteadyState: two layers along x (k 1 and 4) between
// Dirichlet faces u = 0 and u = 1 reach the exact discrete solution,
// piecewise linear with equal flux through every face, to 1e-12.
func TestLayeredMediumSteadyState(t *testing.T) {
	const nx, ny = 32, 16
	shape := []int{ny, nx}
	g := &globalMedia{shape: shape}
	for i := range nx * ny {
		k := 1.0
		if i%nx >= nx/2 {
			k = 4
		}
		g.k, g.rhoC, g.held = append(g.k, k), append(g.rhoC, 1), append(g.held, math.NaN())
	}
	// Equal flux q through every x face: resistances h/k_f per face, the
	// boundary faces half a cell (k of the cell).
	h := 1.0 / nx
	var res []float64 // per face, west to east
	res = append(res, h/2/g.k[0])
	for j := 0; j+1 < nx; j++ {
		k0, k1 := g.k[j], g.k[j+1]
		kf := k0
		if k0 != k1 {
			kf = 2 * k0 * k1 / (k0 + k1)
		}
		res = append(res, h/kf)
	}
	res = append(res, h/2/g.k[nx-1])
	total := 0.0
	for _, r := range res {
		total += r
	}
	exact := make([]float64, nx)
	acc := 0.0
	for j := range nx {
		acc += res[j]
		exact[j] = acc / total
	}
	for _, c := range []struct {
		eq     Equation
		scheme Scheme
		mg     bool
	}{{Poisson, Explicit, false}, {Heat, Explicit, false}, {Poisson, Explicit, true}, {Heat, BackwardEuler, true}} {
		eq := c.eq
		spec := Spec{Shape: shape, Length: []float64{1, 1}, Ghost: 1, Equation: eq, Alpha: 1, Media: g.fn(),
			Faces:   [][2]Face{{{Kind: Neumann}, {Kind: Neumann}}, {{Kind: Dirichlet, Value: 0}, {Kind: Dirichlet, Value: 1}}},
			Initial: Constant(0), Steps: 40000, CheckEvery: 100, Threads: 1, Tolerance: 1e-16,
			Scheme: c.scheme, Multigrid: c.mg}
		if c.mg {
			spec.Steps, spec.Tolerance = 40, 1e-13
		}
		if c.scheme == BackwardEuler {
			spec.DT, spec.Steps, spec.Tolerance = 1e3, 5, 1e-14
		}
		got := run(t, 2, spec).field
		for i, v := range got {
			require.InDelta(t, exact[i%nx], v, 1e-12, "%s %s multigrid %v cell %v", eq, c.scheme, c.mg, unflatten(shape, i))
		}
	}
}

// TestMediaMultigridBitForBit: multigrid and mgcg Poisson and the implicit
// schemes in media (holes and held cells) give the same bits on every
// rank count, process grid, thread count and kernel set.
func TestMediaMultigridBitForBit(t *testing.T) {
	for _, shape := range [][]int{{32, 32}, {16, 16, 16}} {
		nd := len(shape)
		g := randomMedia(shape, 17, true, true)
		for _, c := range []struct {
			eq     Equation
			scheme Scheme
			cg     bool
			fmg    bool
		}{{Poisson, Explicit, false, false}, {Poisson, Explicit, true, false}, {Poisson, Explicit, true, true}, {Heat, BackwardEuler, false, false}, {Heat, CrankNicolson, false, false}} {
			spec := heatSpec(shape)
			spec.Equation, spec.Scheme, spec.CG, spec.FMG = c.eq, c.scheme, c.cg, c.fmg
			spec.Media = g.fn()
			spec.Multigrid = true
			spec.DT = 1e-3
			spec.Steps = 5
			spec.Tolerance = 1e-6 // bits, not convergence: a random medium is the hardest for geometric multigrid
			spec.Faces = faces(nd, Face{Kind: Dirichlet, Value: 1})
			spec.Source = Random(shape, 2, 3, -1)
			spec.Initial = Random(shape, 5, 1, 0)
			var want string
			for _, ranks := range splitRanks {
				for _, threads := range []int{1, 2} {
					spec.Threads = threads
					got := fingerprint(run(t, ranks, spec).field)
					if want == "" {
						want = got
					}
					require.Equal(t, want, got, "%v %s %s cg %v fmg %v ranks %d threads %d", shape, c.eq, c.scheme, c.cg, c.fmg, ranks, threads)
				}
			}
			// The small levels on one worker, as outside the tests.
			restore := team.SetSoloCells(soloDefault)
			spec.Threads = 2
			require.Equal(t, want, fingerprint(run(t, 2, spec).field), "%v %s %s cg %v fmg %v: levels of ≤ %d cells on one worker", shape, c.eq, c.scheme, c.cg, c.fmg, soloDefault)
			restore()
			// Process grids of 4 ranks, and every kernel set.
			grids := [][]int{{4, 1}, {1, 4}, {2, 2}}
			if nd == 3 {
				grids = [][]int{{4, 1, 1}, {1, 2, 2}, {1, 1, 4}}
			}
			for _, dims := range grids {
				spec.Dims = dims
				require.Equal(t, want, fingerprint(run(t, 4, spec).field), "%v %s %s cg %v fmg %v dims %v", shape, c.eq, c.scheme, c.cg, c.fmg, dims)
			}
			spec.Dims = nil
			for _, ks := range stencil.Available() {
				restore := stencil.Use(ks)
				got := fingerprint(run(t, 3, spec).field)
				restore()
				require.Equal(t, want, got, "%v %s %s cg %v fmg %v kernels %s", shape, c.eq, c.scheme, c.cg, c.fmg, ks.Name)
			}
		}
	}
}

// inclusion is k = jump inside the central square (cube) [3/8, 5/8]^d, or,
// checker, on the black squares of a 4×4(×4) checkerboard, and 1 elsewhere.
func inclusion(shape []int, jump float64, checker bool) *globalMedia {
	return kMedia(shape, func(idx []int) float64 {
		in := true
		parity := 0
		for a, x := range idx {
			c := (float64(x) + 0.5) / float64(shape[a])
			in = in && c > 3.0/8 && c < 5.0/8
			parity += int(4 * c)
		}
		if checker {
			in = parity%2 == 1
		}
		if in {
			return jump
		}
		return 1
	})
}

// kMedia is the media of conductivity k(cell's global index), ρc 1,
// nothing held.
func kMedia(shape []int, k func(idx []int) float64) *globalMedia {
	g := &globalMedia{shape: shape}
	total := 1
	for _, n := range shape {
		total *= n
	}
	for i := range total {
		g.k, g.rhoC, g.held = append(g.k, k(unflatten(shape, i))), append(g.rhoC, 1), append(g.held, math.NaN())
	}
	return g
}

// TestMGCGRobustToJumps: CG preconditioned by one cycle brings the normwise
// backward error below 1e-14 in at most 20 iterations, and the
// componentwise one (its stop) below 1e-12 in at most 30, for jumps up to
// 10⁶,
// square inclusion and checkerboard, 2D and 3D, with the same bits on
// every split.
func TestMGCGRobustToJumps(t *testing.T) {
	for _, shape := range [][]int{{128, 128}, {32, 32, 32}} {
		nd := len(shape)
		for _, checker := range []bool{false, true} {
			for _, jump := range []float64{1, 1e2, 1e4, 1e6} {
				g := inclusion(shape, jump, checker)
				spec := heatSpec(shape)
				spec.Equation, spec.Multigrid, spec.CG = Poisson, true, true
				spec.Media = g.fn()
				spec.Faces = faces(nd, Face{Kind: Dirichlet})
				spec.Source = Constant(-1)
				spec.Initial = Constant(0)
				spec.Steps, spec.Tolerance = 30, 1e-12
				spec.MG.Pre, spec.MG.Post = 2, 2
				var want string
				splits := []int{2}
				if jump == 1e6 {
					splits = []int{2, 1, 3} // bits over splits (every jump: TestMediaMultigridBitForBit)
				}
				for _, ranks := range splits {
					spec.Threads = 1 + ranks%2
					out := run(t, ranks, spec)
					info, sha := out.info, fingerprint(out.field)
					require.True(t, out.converged, "%v jump %g checker %v: componentwise backward error %g after %d iterations", shape, jump, checker, info.ComponentError, out.steps)
					first := slices.IndexFunc(info.BackwardHistory, func(b float64) bool { return b < 1e-14 }) + 1
					require.True(t, first > 0 && first <= 20, "%v jump %g checker %v: normwise backward error below 1e-14 after %d iterations (%v)", shape, jump, checker, first, info.BackwardHistory)
					if want == "" {
						want = sha
						t.Logf("%v jump %g checker %v: %d iterations, componentwise backward error %.2e, normwise %.2e, relative residual %.2e",
							shape, jump, checker, info.Cycles, info.ComponentError, info.BackwardError, info.History[len(info.History)-1])
					}
					require.Equal(t, want, sha, "%v jump %g ranks %d", shape, jump, ranks)
				}
			}
		}
	}
}

// TestMediaManufacturedSecondOrder: with smooth k(x) = 1 + ½sin(2πx) and
// u = sin(πx)·sin(πy) on zero Dirichlet faces, ∇·(k∇u) = f solved by mgcg
// (and by explicit heat steps to the steady state on the coarsest grid's
// check) has an error that falls 4× per halving of h: second order.
func TestMediaManufacturedSecondOrder(t *testing.T) {
	kOf := func(x float64) float64 { return 1 + 0.5*math.Sin(2*math.Pi*x) }
	exact := func(x []float64) float64 { return math.Sin(math.Pi*x[1]) * math.Sin(math.Pi*x[0]) }
	source := func(x []float64, _ []int) float64 {
		px, py := x[1], x[0]
		u := math.Sin(math.Pi*px) * math.Sin(math.Pi*py)
		return math.Pi*math.Pi*math.Cos(2*math.Pi*px)*math.Cos(math.Pi*px)*math.Sin(math.Pi*py) - 2*math.Pi*math.Pi*kOf(px)*u
	}
	var errs []float64
	for _, n := range []int{32, 64, 128} {
		shape := []int{n, n}
		g := &globalMedia{shape: shape}
		for i := range n * n {
			g.k = append(g.k, kOf((float64(i%n)+0.5)/float64(n)))
			g.rhoC, g.held = append(g.rhoC, 1), append(g.held, math.NaN())
		}
		spec := heatSpec(shape)
		spec.Equation, spec.Multigrid, spec.CG = Poisson, true, true
		spec.Media = g.fn()
		spec.Source = source
		spec.Initial = Constant(0)
		spec.Steps, spec.Tolerance = 40, 1e-12
		out := run(t, 2, spec)
		require.True(t, out.converged, "n = %d: %d iterations, residual %g", n, out.steps, out.residual)
		worst := 0.0
		cellCentres(shape, spec.Length, func(i int, x []float64) {
			worst = max(worst, math.Abs(out.field[i]-exact(x)))
		})
		errs = append(errs, worst)
	}
	t.Logf("max errors %.3e", errs)
	for i := 1; i < len(errs); i++ {
		require.InDelta(t, 4, errs[i-1]/errs[i], 0.4, "error ratio at level %d: %v", i, errs)
	}
}

// smoothBall is HPGMG-FV's variable coefficient, β = 5.5 + 4.5·tanh(10(r −
// 0.25)), r the distance from the unit cube's centre; with u = sin(πx)
// sin(πy) sin(πz) (zero on the faces), ballSource is f = ∇·(β∇u), the
// source of the Poisson problem ∇·(β∇u) = f.
func smoothBall(x []float64) (beta, dbeta, r float64) {
	r = math.Sqrt((x[0]-0.5)*(x[0]-0.5) + (x[1]-0.5)*(x[1]-0.5) + (x[2]-0.5)*(x[2]-0.5))
	sech := 1 / math.Cosh(10*(r-0.25))
	return 5.5 + 4.5*math.Tanh(10*(r-0.25)), 45 * sech * sech, r
}

func ballExact(x []float64) float64 {
	return math.Sin(math.Pi*x[0]) * math.Sin(math.Pi*x[1]) * math.Sin(math.Pi*x[2])
}

func ballSource(x []float64, _ []int) float64 {
	beta, dbeta, r := smoothBall(x)
	s := []float64{math.Sin(math.Pi * x[0]), math.Sin(math.Pi * x[1]), math.Sin(math.Pi * x[2])}
	c := []float64{math.Cos(math.Pi * x[0]), math.Cos(math.Pi * x[1]), math.Cos(math.Pi * x[2])}
	grad := []float64{math.Pi * c[0] * s[1] * s[2], math.Pi * s[0] * c[1] * s[2], math.Pi * s[0] * s[1] * c[2]}
	radial := 0.0 // ∇β·∇u = β'(r) (x − centre)/r · ∇u
	if r > 0 {
		for a := range 3 {
			radial += (x[a] - 0.5) / r * grad[a]
		}
	}
	return -3*math.Pi*math.Pi*beta*s[0]*s[1]*s[2] + dbeta*radial
}

// ballMedia are HPGMG-FV's smooth medium on a grid of shape (β as k, ρc 1,
// nothing held) and the exact solution at the cell centres.
func ballMedia(shape []int) (g *globalMedia, exact []float64) {
	g = &globalMedia{shape: shape}
	cellCentres(shape, ones(3), func(_ int, x []float64) {
		beta, _, _ := smoothBall(x)
		g.k, g.rhoC, g.held = append(g.k, beta), append(g.rhoC, 1), append(g.held, math.NaN())
		exact = append(exact, ballExact(x))
	})
	return g, exact
}

// TestMediaFMGReachesDiscretisationError: in HPGMG-FV's smooth medium one
// full-multigrid cycle (the first guess mgcg would go on from) is as close
// to the exact solution as the converged discrete solution is — within
// 20% of its error — at 32³ and 48³ (whose hierarchy stops at 6³), on 2
// ranks. (Interpolating each level's solution piecewise-constantly, as the
// cycles' corrections are in media, left an error of 6e-2, 25× the
// discretisation error.)
func TestMediaFMGReachesDiscretisationError(t *testing.T) {
	for _, n := range []int{32, 48} {
		shape := []int{n, n, n}
		g, exact := ballMedia(shape)
		spec := heatSpec(shape)
		spec.Equation, spec.Multigrid, spec.CG = Poisson, true, true
		spec.Media, spec.Source, spec.Initial = g.fn(), ballSource, Constant(0)
		worst := func(f []float64) float64 {
			e := 0.0
			for i := range exact {
				e = max(e, math.Abs(f[i]-exact[i]))
			}
			return e
		}
		spec.Steps, spec.Tolerance = 40, 1e-12
		converged := run(t, 2, spec)
		require.True(t, converged.converged, "n = %d", n)
		spec.Steps, spec.FMG = 1, true
		fmg := run(t, 2, spec)
		t.Logf("n = %d: one FMG cycle %.3e, converged %.3e", n, worst(fmg.field), worst(converged.field))
		require.Less(t, worst(fmg.field), 1.2*worst(converged.field), "n = %d", n)
	}
}

// TestMediaHeldCellsInAConductor: a heater held inside a k = 100 plate
// (with an insulating slot beside it), backward Euler and mgcg: every
// solve reaches its tolerance. (With coarse cells over the heater left
// free, their corrections fought the held cells and the cycles diverged
// to a relative residual of 4e4.)
func TestMediaHeldCellsInAConductor(t *testing.T) {
	const n = 64
	shape := []int{n, n}
	g := &globalMedia{shape: shape}
	for i := range n * n {
		y, x := (float64(i/n)+0.5)/n, (float64(i%n)+0.5)/n
		k, h := 1.0, math.NaN()
		if y >= 0.2 && y < 0.8 && x >= 0.2 && x < 0.8 {
			k = 100
		}
		if y >= 0.4 && y < 0.9 && x >= 0.49 && x < 0.51 {
			k = 0
		}
		if (y-0.55)*(y-0.55)+(x-0.3)*(x-0.3) <= 0.04*0.04 {
			h = 1
		}
		g.k, g.rhoC, g.held = append(g.k, k), append(g.rhoC, 1), append(g.held, h)
	}
	for _, cg := range []bool{false, true} {
		spec := heatSpec(shape)
		spec.Media = g.fn()
		spec.Initial = Constant(0.5)
		spec.Multigrid = true
		if cg {
			spec.Equation, spec.CG, spec.Steps, spec.Tolerance = Poisson, true, 30, 1e-12
		} else {
			spec.Scheme, spec.DT, spec.Steps, spec.Tolerance = BackwardEuler, 0.002, 5, 1e-10
		}
		var mu sync.Mutex // OnCheck runs on every rank
		worst := 0.0
		spec.OnCheck = func(_ int, r float64) {
			mu.Lock()
			worst = max(worst, r)
			mu.Unlock()
		}
		out := run(t, 2, spec)
		if cg {
			require.True(t, out.converged, "mgcg: %d iterations", out.steps)
		} else {
			require.Less(t, slices.Max(out.info.ComponentHistory), spec.Tolerance, "backward Euler: a step's backward error")
			require.Less(t, worst, 1e-8, "backward Euler: a step's relative residual")
		}
	}
}

// TestMediaStreamingBitForBit: the explicit step in media streamed
// (StreamAbove 0: every 2D grid streams; check steps do not) ends with the
// field.sha256 of the plain run, with and without a source, every set, on
// 1–3 ranks and 1–2 threads; rows of odd widths start at every alignment.
func TestMediaStreamingBitForBit(t *testing.T) {
	shape := []int{37, 45}
	g := randomMedia(shape, 13, true, true)
	spec := heatSpec(shape)
	spec.Media, spec.DT = g.fn(), 0
	spec.Steps, spec.CheckEvery = 40, 7
	spec.Initial = Random(shape, 6, 1, 0)
	streams := func(above int) bool {
		keep := StreamAbove
		StreamAbove = above
		defer func() { StreamAbove = keep }()
		s, err := New(local.NewWorld(1).Comm(0), spec)
		require.NoError(t, err)
		defer s.Close()
		return s.mstep.Streams()
	}
	require.False(t, streams(StreamAbove), "a %v grid streams by default", shape)
	require.True(t, streams(0), "StreamAbove 0: the step does not stream")
	for _, src := range []Profile{nil, Gaussian([]float64{0.3, 0.6}, 0.2, 2, 0)} {
		spec.Source = src
		for _, ks := range stencil.Available() {
			for _, sp := range []struct{ ranks, threads int }{{1, 1}, {1, 2}, {2, 2}, {3, 1}} {
				spec.Threads = sp.threads
				restore := stencil.Use(ks)
				want := fingerprint(run(t, sp.ranks, spec).field)
				keep := StreamAbove
				StreamAbove = 0
				got := fingerprint(run(t, sp.ranks, spec).field)
				StreamAbove = keep
				restore()
				require.Equal(t, want, got, "%s %+v source %v", ks.Name, sp, src != nil)
			}
		}
	}
}

// A medium with nothing to solve, or whose face coefficients overflow, is
// refused by every rank before a step (a MediaError: the config's to fix),
// where before it stepped with dt = +Inf or diverged at step 10.
func TestMediaRefusedBeforeAStep(t *testing.T) {
	shape := []int{12, 10}
	fill := func(k, held float64) *globalMedia {
		g := &globalMedia{shape: shape}
		for range 120 {
			g.k, g.rhoC, g.held = append(g.k, k), append(g.rhoC, 1), append(g.held, held)
		}
		return g
	}
	cases := map[string]struct {
		g    *globalMedia
		want string
	}{
		"every cell a hole": {fill(0, math.NaN()), "no free conducting cell"},
		"every cell held":   {fill(1, 2), "no free conducting cell"},
		"k/h² overflows":    {fill(1e307, math.NaN()), "overflow"},
	}
	for name, tc := range cases {
		for _, eq := range []Equation{Heat, Poisson} {
			spec := heatSpec(shape)
			spec.Equation, spec.Media, spec.DT = eq, tc.g.fn(), 0
			spec.Initial, spec.Steps = Constant(0), 3
			if eq == Poisson {
				spec.Faces = faces(2, Face{Kind: Dirichlet, Value: 1})
			}
			for _, ranks := range []int{1, 3} {
				err := local.Run(ranks, func(c comm.Comm) error {
					s, err := New(c, spec)
					if err == nil {
						s.Close()
					}
					return err
				})
				var me *MediaError
				require.ErrorAs(t, err, &me, "%s %s ranks %d", name, eq, ranks)
				require.Contains(t, me.Error(), tc.want)
			}
		}
	}
	// Adjacent k of 1e154 and 3e155: 2·k_i·k_j overflows, the mean does
	// not; the step is a finite, positive one.
	g := fill(1e154, math.NaN())
	for i := range g.k {
		if i%10 >= 5 {
			g.k[i] = 3e155
		}
	}
	spec := heatSpec(shape)
	spec.Media, spec.DT, spec.Steps, spec.Initial = g.fn(), 0, 5, Random(shape, 3, 1, 0)
	out := run(t, 2, spec)
	for _, v := range out.field {
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0))
	}
}

// A Poisson problem in media begins with plain cycles and hands over to
// mgcg where their mean reduction of the backward error is past
// plan.StallFactor: a 10⁶ inclusion at 256² (jumps along the coarse
// grids' lines, corrections interpolated by the faces) stays with the
// cycles, a 10⁶ checkerboard (whose first cycles
// make the residual larger) hands over after two and starts mgcg from the
// start again, so its field is mgcg's from the start, bit for bit; a held
// disc inside a 10³ inclusion hands over from where its cycles got to.
// Each has the same bits on every split.
func TestMediaCyclesHandOverToKrylov(t *testing.T) {
	for _, c := range []struct {
		name string
		g    *globalMedia
		kind string
		from int
		asCG bool // the field is mgcg's from the start
	}{
		{"inclusion 10⁶", inclusion([]int{256, 256}, 1e6, false), "multigrid", 0, false},
		{"checkerboard 10⁶", inclusion([]int{64, 64}, 1e6, true), "mgcg", 2, true},
		{"held disc inside 10³", heldDisc([]int{48, 48}, true), "mgcg", 2, false},
	} {
		spec := heatSpec(c.g.shape)
		spec.Equation, spec.Multigrid, spec.Media = Poisson, true, c.g.fn()
		spec.Faces = faces(2, Face{Kind: Dirichlet})
		spec.Initial, spec.Source = Constant(0), Constant(-1)
		spec.Steps, spec.Tolerance = 60, 1e-12
		var want string
		for _, ranks := range splitRanks {
			for _, threads := range []int{1, 2} {
				spec.Threads = threads
				out := run(t, ranks, spec)
				require.True(t, out.converged, "%s ranks %d threads %d", c.name, ranks, threads)
				require.Equal(t, c.kind, out.info.Kind, c.name)
				require.Equal(t, c.from, out.info.KrylovFrom, c.name)
				got := fingerprint(out.field)
				if want == "" {
					want = got
				}
				require.Equal(t, want, got, "%s ranks %d threads %d", c.name, ranks, threads)
			}
		}
		spec.CG = true
		cg := fingerprint(run(t, 2, spec).field)
		if c.asCG {
			require.Equal(t, cg, want, "%s: mgcg from the start", c.name)
		} else {
			require.NotEqual(t, cg, want, "%s: not mgcg from the start", c.name)
		}
	}
}

// Each implicit step judges its own cycles: after a Crank–Nicolson step
// inside a held disc hands over to mgcg, the next begins with plain cycles
// again and hands over on its own (2 hand-overs; a run that kept to mgcg
// would count 1), with the same bits on every split.
func TestMediaStepsHandOverEachOnItsOwn(t *testing.T) {
	g := heldDisc([]int{48, 48}, true)
	spec := heatSpec(g.shape)
	spec.Multigrid, spec.Media = true, g.fn()
	spec.Faces = faces(2, Face{Kind: Dirichlet})
	spec.Initial = Constant(0)
	spec.Scheme, spec.DT, spec.Steps, spec.Tolerance = CrankNicolson, 0.01, 2, 1e-12
	var want string
	for _, ranks := range splitRanks {
		for _, threads := range []int{1, 2} {
			spec.Threads = threads
			out := run(t, ranks, spec)
			require.Equal(t, 2, out.info.KrylovSolves, "ranks %d threads %d", ranks, threads)
			require.Equal(t, "multigrid", out.info.Kind)
			got := fingerprint(out.field)
			if want == "" {
				want = got
			}
			require.Equal(t, want, got, "ranks %d threads %d", ranks, threads)
		}
	}
}
