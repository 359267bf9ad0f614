package solver

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/multigrid"
	"heat/operator"
	"heat/plan"
	"heat/stencil"
)

// slabGhost is the contract's ghost g = a·u + b of a face beside a cell of
// conductivity k at spacing h, written out here apart from the operator's:
// Dirichlet 2v − u; Neumann (flux q = k∂u/∂n, n outward) u + q·h/k; Robin
// 2u_f − u with u_f = (2k·u/h + hc·v)/(2k/h + hc).
func slabGhost(f Face, k, h float64) (a, b float64) {
	switch f.Kind {
	case Dirichlet:
		return -1, 2 * f.Value
	case Neumann:
		return 1, f.Value * h / k
	}
	den := 2*k/h + f.H
	// g = 2(2k/h·u + hc·v)/den − u
	return 2*(2*k/h)/den - 1, 2 * f.H * f.Value / den
}

// slabExact solves the discrete contract of a slab along x by elimination
// (Thomas): n cells of conductivity k, Σ_faces k(u_nb − u)/h² = rhs, the
// faces' ghosts from slabGhost.
func slabExact(n int, k, rhs float64, lo, hi Face) []float64 {
	h := 1.0 / float64(n)
	c := k / (h * h)
	lower, diag, upper, r := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		lower[i], diag[i], upper[i], r[i] = c, -2*c, c, rhs
	}
	a0, b0 := slabGhost(lo, k, h)
	a1, b1 := slabGhost(hi, k, h)
	diag[0] += c * a0
	r[0] -= c * b0
	diag[n-1] += c * a1
	r[n-1] -= c * b1
	for i := 1; i < n; i++ {
		w := lower[i] / diag[i-1]
		diag[i] -= w * upper[i-1]
		r[i] -= w * r[i-1]
	}
	u := make([]float64, n)
	u[n-1] = r[n-1] / diag[n-1]
	for i := n - 2; i >= 0; i-- {
		u[i] = (r[i] - upper[i]*u[i+1]) / diag[i]
	}
	return u
}

// slabContinuous is the slab's solution of (k u')' = rhs, u(0) = lo.Value
// and at x = 1 the Robin or Neumann condition of hi: u = u0 + G·x + rhs/(2k)·x².
func slabContinuous(k, rhs float64, lo, hi Face) func(x float64) float64 {
	u0 := lo.Value
	var g float64
	if hi.Kind == Neumann { // k u'(1) = q
		g = (hi.Value - rhs) / k
	} else { // −k u'(1) = hc (u(1) − v)
		g = -(hi.H*(u0-hi.Value) + hi.H*rhs/(2*k) + rhs) / (k + hi.H)
	}
	return func(x float64) float64 { return u0 + g*x + rhs/(2*k)*x*x }
}

// slabSpec is a slab of ny × n cells along x: the low x face held at 1, the
// high one hi, insulated y faces, the source f; Poisson or the heat equation
// (its steady state), uniform (k = the heat equation's α, Poisson's 1) or a
// uniform map k.
func slabSpec(n int, eq Equation, k float64, media bool, hi Face, f float64) Spec {
	shape := []int{4, n}
	spec := Spec{Shape: shape, Length: []float64{1, 1}, Ghost: 1, Equation: eq, Alpha: 1,
		Faces:   [][2]Face{{{Kind: Neumann}, {Kind: Neumann}}, {{Kind: Dirichlet, Value: 1}, hi}},
		Initial: Constant(0), Source: Constant(f), CheckEvery: 100, Threads: 2}
	if eq == Heat {
		spec.Alpha = k
	}
	if media {
		g := &globalMedia{shape: shape}
		for range 4 * n {
			g.k, g.rhoC, g.held = append(g.k, k), append(g.rhoC, 1), append(g.held, math.NaN())
		}
		spec.Media = g.fn()
	}
	return spec
}

// A slab with the far face convective (Robin) or under a flux (Neumann),
// steady, with a source: every solver reaches the exact discrete solution
// of the contract (an independent elimination) to 1e-12, in the uniform
// medium and in a map.
func TestSlabFacesExactDiscrete(t *testing.T) {
	const n = 16
	for _, hi := range []Face{{Kind: Robin, H: 3, Value: 0.25}, {Kind: Neumann, Value: -1.5}, {Kind: Neumann, Value: 0.75}} {
		for _, media := range []bool{false, true} {
			for _, c := range []struct {
				name   string
				eq     Equation
				scheme Scheme
				mg, cg bool
			}{{"jacobi", Poisson, Explicit, false, false}, {"multigrid", Poisson, Explicit, true, false},
				{"mgcg", Poisson, Explicit, true, true}, {"explicit", Heat, Explicit, false, false},
				{"backward-euler", Heat, BackwardEuler, true, false}} {
				if c.cg && !media {
					continue // mgcg is the media's
				}
				k := 1.0
				if media || c.eq == Heat {
					k = 2.5
				}
				const f = -2.0
				spec := slabSpec(n, c.eq, k, media, hi, f)
				spec.Scheme, spec.Multigrid, spec.CG = c.scheme, c.mg, c.cg
				rhs := f // Poisson: ∇·(k∇u) = f
				switch {
				case c.eq == Heat && c.scheme == Explicit:
					spec.DT = 0.9 * operator.NewUniform(k, spec.Spacing()).StableDT()
					spec.Steps, spec.Tolerance = 16000, 1e-17
					rhs = -f // steady: ∇·(k∇u) + f = 0
				case c.eq == Heat:
					spec.DT, spec.Steps, spec.Tolerance = 1e4, 6, 1e-14
					rhs = -f
				case c.mg:
					spec.Steps, spec.Tolerance = 60, 1e-14
				default:
					spec.Steps, spec.Tolerance = 12000, 1e-17
				}
				if media && c.eq == Heat && c.scheme == Explicit {
					spec.DT = 0 // the media's own limit
				}
				want := slabExact(n, k, rhs, spec.Faces[1][0], hi)
				name := fmt.Sprintf("%s, media %v, far face %+v", c.name, media, hi)
				got := run(t, 2, spec).field
				for i, v := range got {
					require.InDelta(t, want[i%n], v, 1e-12, "%s: cell %v", name, unflatten(spec.Shape, i))
				}
			}
		}
	}
}

// The slab against its continuous solution (quadratic: the source), on
// three grids: the error falls 4× a halving of h, for the Robin face and
// for a flux.
func TestSlabFacesSecondOrder(t *testing.T) {
	for _, hi := range []Face{{Kind: Robin, H: 3, Value: 0.25}, {Kind: Neumann, Value: -1.5}} {
		const k, f = 2.5, -2.0
		exact := slabContinuous(k, f, Face{Kind: Dirichlet, Value: 1}, hi)
		var errs []float64
		for _, n := range []int{16, 32, 64} {
			spec := slabSpec(n, Poisson, k, true, hi, f)
			spec.Multigrid, spec.Steps, spec.Tolerance = true, 60, 1e-13
			got := run(t, 1, spec).field
			e := 0.0
			for i, v := range got {
				e = max(e, math.Abs(v-exact((float64(i%n)+0.5)/float64(n))))
			}
			errs = append(errs, e)
		}
		for i := 1; i < len(errs); i++ {
			r := errs[i-1] / errs[i]
			require.True(t, r > 3.6 && r < 4.4, "%+v: errors %v, ratio %.3f", hi, errs, r)
		}
	}
}

// mixedFaces is a face of every kind: Robin, fluxes in and out, Dirichlet,
// an insulated one.
func mixedFaces(nd int) [][2]Face {
	f := [][2]Face{
		{{Kind: Robin, H: 4, Value: 0.5}, {Kind: Neumann, Value: 2}},
		{{Kind: Dirichlet, Value: 1}, {Kind: Robin, H: 0.5, Value: -1}},
		{{Kind: Neumann, Value: -1}, {Kind: Neumann}},
	}
	return f[3-nd:]
}

// Robin faces and fluxes keep every solver's bits on every rank count,
// process grid, thread count and kernel set, uniform and in media.
func TestFacesBitForBit(t *testing.T) {
	for _, shape := range [][]int{{20, 18}, {10, 8, 9}} {
		nd := len(shape)
		for _, media := range []bool{false, true} {
			for _, c := range []struct {
				eq     Equation
				scheme Scheme
				mg, cg bool
			}{{Heat, Explicit, false, false}, {Poisson, Explicit, false, false}, {Poisson, Explicit, true, false},
				{Poisson, Explicit, true, true}, {Heat, BackwardEuler, true, false}, {Heat, CrankNicolson, true, false}} {
				if c.cg && !media {
					continue
				}
				spec := heatSpec(shape)
				spec.Equation, spec.Scheme, spec.Multigrid, spec.CG = c.eq, c.scheme, c.mg, c.cg
				spec.Faces = mixedFaces(nd)
				spec.Source = Random(shape, 2, 3, -1)
				spec.Initial = Random(shape, 5, 1, 0)
				spec.Steps, spec.Tolerance = 12, 1e-9
				if c.scheme != Explicit {
					spec.DT = 1e-3
				}
				if media {
					spec.Media = randomMedia(shape, 7, true, true).fn()
					if c.scheme == Explicit {
						spec.DT = 0
					}
				}
				name := fmt.Sprintf("%v media %v %s %s mg %v cg %v", shape, media, c.eq, c.scheme, c.mg, c.cg)
				var want string
				for _, split := range [][2]int{{1, 1}, {3, 2}, {4, 1}} {
					spec.Threads = split[1]
					got := fingerprint(run(t, split[0], spec).field)
					if want == "" {
						want = got
					}
					require.Equal(t, want, got, "%s: ranks %d threads %d", name, split[0], split[1])
				}
				spec.Dims = []int{1, 4, 1}[:nd]
				require.Equal(t, want, fingerprint(run(t, 4, spec).field), "%s: dims %v", name, spec.Dims)
				spec.Dims = nil
				for _, ks := range stencil.Available() {
					restore := stencil.Use(ks)
					got := fingerprint(run(t, 2, spec).field)
					restore()
					require.Equal(t, want, got, "%s: kernels %s", name, ks.Name)
				}
			}
		}
	}
}

// energyResidual is |ΔE − inflow| relative to the larger of the two.
func energyResidual(e *EnergyBalance) float64 {
	d := e.Content - e.ContentStart
	return math.Abs(d-e.Inflow()) / max(math.Abs(d), math.Abs(e.Inflow()))
}

// runEnergy runs spec on ranks and returns rank 0's energy account.
func runEnergy(t *testing.T, ranks int, spec Spec) *EnergyBalance {
	t.Helper()
	e := run(t, ranks, spec).energy
	require.NotNil(t, e)
	return e
}

// The energy account closes: with Robin faces, fluxes in and out, a
// Dirichlet face, a source (steady or switching on in time) and held
// cells, the change of Σ ρc·u·V equals the time integral of the flows in
// to 1e-10, explicit, backward Euler and Crank–Nicolson, uniform and in
// media, and its sums have the same bits on every split.
func TestEnergyBalanceCloses(t *testing.T) {
	shape := []int{18, 20}
	pulse := func(tm float64) Profile {
		return func(x []float64, idx []int) float64 {
			if tm < 0.002 {
				return 0
			}
			return 50 * math.Exp(-20*((x[0]-0.5)*(x[0]-0.5)+(x[1]-0.3)*(x[1]-0.3)))
		}
	}
	for _, media := range []bool{false, true} {
		for _, scheme := range []Scheme{Explicit, BackwardEuler, CrankNicolson} {
			for _, varying := range []string{"", "switching", "weighted"} {
				spec := heatSpec(shape)
				spec.Scheme, spec.Multigrid = scheme, scheme != Explicit
				spec.Faces = mixedFaces(2)
				spec.Initial = Random(shape, 5, 1, 0)
				spec.Source = Constant(3)
				switch varying {
				case "switching":
					spec.Source, spec.SourceAt = nil, pulse
				case "weighted":
					// A heater on a cycle: c(t)·h(x), the weight per step.
					spec.Source, spec.SourceAt = nil, pulse
					spec.SourceKey = func(tm float64) string { return fmt.Sprint(tm >= 0.002) }
					spec.SourceWeight = func(tm float64) float64 { return 1 + 0.8*math.Sin(2000*tm) }
				}
				spec.Steps, spec.Tolerance = 40, 1e-13
				stepsIn(&spec, shape, scheme, media)
				name := fmt.Sprintf("media %v %s source %q", media, scheme, varying)
				e := runEnergy(t, 1, spec)
				r := energyResidual(e)
				require.Less(t, r, 1e-10, "%s: %+v", name, e)
				require.Greater(t, math.Abs(e.Content-e.ContentStart), 1e-3, "%s: the content hardly changed", name)
				for _, ranks := range []int{3, 4} {
					require.Equal(t, e, runEnergy(t, ranks, spec), "%s: ranks %d", name, ranks)
				}
			}
		}
	}
}

// Crank–Nicolson against u = e^(−t)·sin(πx)·sin(πy) on [0, 1.25]×[0, 1.5]
// (so that the faces' values change in time), its source, and the faces
// held at u's values through FaceAt: second order in space and time with
// dt ∝ h (the error falls 4× a halving of both).
func TestManufacturedFacesInTime(t *testing.T) {
	exact := func(x []float64, tm float64) float64 {
		return math.Exp(-tm) * math.Sin(math.Pi*x[0]) * math.Sin(math.Pi*x[1])
	}
	for _, c := range []struct {
		scheme Scheme
		lo, hi float64 // the error ratio a halving of h and dt must give
	}{{CrankNicolson, 3.6, 4.4}} {
		var errs []float64
		for _, n := range []int{16, 32, 64} {
			shape := []int{n * 5 / 4, n * 3 / 2}
			spec := heatSpec(shape)
			spec.Length = []float64{1.25, 1.5}
			spec.Scheme, spec.Multigrid, spec.Tolerance = c.scheme, true, 1e-12
			d := Face{Kind: Dirichlet, Varies: true}
			spec.Faces = [][2]Face{{d, d}, {d, d}}
			spec.FacesInTime = true
			spec.FaceAt = func(axis, side int, x []float64, tm float64) (float64, float64) { return exact(x, tm), 0 }
			spec.Initial = func(x []float64, _ []int) float64 { return exact(x, 0) }
			spec.SourceAt = func(tm float64) Profile {
				return func(x []float64, _ []int) float64 { return (2*math.Pi*math.Pi - 1) * exact(x, tm) }
			}
			const tEnd = 0.25
			spec.DT = 0.5 / float64(n)
			spec.Steps = plan.StepsTo(tEnd, spec.DT)
			got := run(t, 2, spec).field
			e := 0.0
			cellCentres(shape, spec.Length, func(i int, x []float64) {
				e = max(e, math.Abs(got[i]-exact(x, tEnd)))
			})
			errs = append(errs, e)
		}
		for i := 1; i < len(errs); i++ {
			r := errs[i-1] / errs[i]
			require.True(t, r > c.lo && r < c.hi, "%s: errors %v, ratio %.3f", c.scheme, errs, r)
		}
	}
}

// A Poisson problem with only fluxes on its faces is solvable when the
// source balances them (∫f dV = ∮q dA), and refused otherwise.
func TestPoissonFluxesMustBalanceTheSource(t *testing.T) {
	shape := []int{16, 16}
	for _, c := range []struct {
		q, f float64
		ok   bool
	}{{1, 2, true}, {1, 0, false}, {-0.5, -1, true}} {
		spec := heatSpec(shape)
		spec.Equation, spec.Multigrid, spec.Steps, spec.Tolerance = Poisson, true, 40, 1e-10
		spec.Faces = [][2]Face{{{Kind: Neumann}, {Kind: Neumann}}, {{Kind: Neumann, Value: c.q}, {Kind: Neumann, Value: c.q}}}
		spec.Source, spec.Initial = Constant(c.f), Constant(0)
		err := local.Run(2, func(cm comm.Comm) error {
			s, err := New(cm, spec)
			if err != nil {
				return err
			}
			defer s.Close()
			return s.Run(context.Background())
		})
		if c.ok {
			require.NoError(t, err, "%+v", c)
			continue
		}
		var ie *multigrid.IncompatibleError
		require.ErrorAs(t, err, &ie, "%+v", c)
	}
}

// A source keyed by its field (SourceKey) is filled again only when the key
// changes, with the bits of the run that fills it every step.
func TestSourceKeyKeepsTheField(t *testing.T) {
	shape := []int{16, 20}
	for _, scheme := range []Scheme{Explicit, CrankNicolson} {
		var calls atomic.Int64
		on := func(tm float64) bool { return tm >= 0.002 }
		at := func(tm float64) Profile {
			calls.Add(1)
			return func(x []float64, _ []int) float64 {
				if !on(tm) {
					return 0
				}
				return 50 * x[0] * x[1]
			}
		}
		spec := heatSpec(shape)
		spec.Scheme, spec.Multigrid = scheme, scheme != Explicit
		spec.Faces = mixedFaces(2)
		spec.Initial, spec.SourceAt = Random(shape, 5, 1, 0), at
		spec.Steps, spec.Tolerance = 40, 1e-12
		if scheme != Explicit {
			spec.DT = 2e-4
		}
		want := fingerprint(run(t, 2, spec).field)
		every := calls.Swap(0)
		spec.SourceKey = func(tm float64) string { return fmt.Sprint(on(tm)) }
		got := run(t, 2, spec).field
		require.Equal(t, want, fingerprint(got), "%s", scheme)
		require.Less(t, calls.Load(), every/4, "%s: SourceAt called %d times keyed, %d not", scheme, calls.Load(), every)
		e := runEnergy(t, 2, spec)
		require.Less(t, energyResidual(e), 1e-10, "%s", scheme)
	}
}

// A source weighted in time, c(t)·h(x), is the product evaluated per cell
// to rounding (the steps weigh h by c in their coefficient instead), and
// has the same bits on every split: explicit (uniform: the kernel's source
// weight; media: multiplied in), backward Euler and Crank–Nicolson.
func TestSourceWeightIsTheProduct(t *testing.T) {
	shape := []int{17, 20}
	h := func(x []float64, _ []int) float64 {
		return 40 * math.Exp(-15*((x[0]-0.4)*(x[0]-0.4)+(x[1]-0.6)*(x[1]-0.6)))
	}
	c := func(tm float64) float64 { return math.Cos(900 * tm) }
	for _, media := range []bool{false, true} {
		for _, scheme := range []Scheme{Explicit, BackwardEuler, CrankNicolson} {
			spec := heatSpec(shape)
			spec.Scheme, spec.Multigrid, spec.Tolerance = scheme, scheme != Explicit, 1e-13
			spec.Faces = mixedFaces(2)
			spec.Initial = Random(shape, 5, 1, 0)
			spec.Steps = 30
			stepsIn(&spec, shape, scheme, media)
			name := fmt.Sprintf("media %v %s", media, scheme)
			whole := spec
			whole.SourceAt = func(tm float64) Profile {
				w := c(tm)
				return func(x []float64, idx []int) float64 { return w * h(x, idx) }
			}
			want := run(t, 1, whole).field
			spec.SourceAt = func(float64) Profile { return h }
			spec.SourceKey = func(float64) string { return "" }
			spec.SourceWeight = c
			got := run(t, 1, spec).field
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-11*(1+math.Abs(want[i])), "%s: cell %d", name, i)
			}
			require.Equal(t, fingerprint(got), fingerprint(run(t, 3, spec).field), "%s: 3 ranks", name)
		}
	}
}

// stepsIn sets the time step of the energy and weight tests' schemes
// (implicit: 2e-4, explicit: the stability limit) and, with media, a
// random medium with holes and held cells.
func stepsIn(spec *Spec, shape []int, scheme Scheme, media bool) {
	if scheme != Explicit {
		spec.DT = 2e-4
	}
	if media {
		spec.Media = randomMedia(shape, 9, true, true).fn()
		if scheme == Explicit {
			spec.DT = 0
		}
	}
}
