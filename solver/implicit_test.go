package solver

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"heat/comm"
	"heat/comm/local"
	"heat/multigrid"
	"heat/operator"
	"heat/plan"
)

// sineDecay is a heat run of a sine mode on zero Dirichlet faces to t_end,
// and its exact decay exp(−α·π²·Σk²·t).
func sineDecay(shape []int, scheme Scheme, dt, tEnd float64) (Spec, func(x []float64) float64) {
	s := heatSpec(shape)
	nd := len(shape)
	s.Scheme, s.DT, s.TEnd = scheme, dt, tEnd
	s.Steps = plan.StepsTo(tEnd, dt)
	s.Tolerance = 1e-9
	s.Initial = Sine([]int{1, 1, 1}[:nd], s.Length, 1, 0)
	rate := s.Alpha * math.Pi * math.Pi * float64(nd)
	return s, func(x []float64) float64 {
		p := math.Exp(-rate * tEnd)
		for _, xa := range x {
			p *= math.Sin(math.Pi * xa)
		}
		return p
	}
}

// maxErr is max |field − exact| over the cell centres.
func maxErr(s Spec, field []float64, exact func([]float64) float64) float64 {
	e := 0.0
	cellCentres(s.Shape, s.Length, func(i int, x []float64) { e = max(e, math.Abs(field[i]-exact(x))) })
	return e
}

// Against the exact decay of a sine mode, with h fine enough that the time
// error dominates: halving dt halves backward Euler's error (first order)
// and quarters Crank–Nicolson's (second order). The steps are far beyond
// the explicit limit, and the last step is shortened to land on t_end.
func TestImplicitSchemesOrderInTime(t *testing.T) {
	shape := []int{128, 128}
	for _, c := range []struct {
		scheme Scheme
		ratio  float64
	}{{BackwardEuler, 2}, {CrankNicolson, 4}} {
		var errs []float64
		for _, dt := range []float64{0.02, 0.01, 0.005} {
			s, exact := sineDecay(shape, c.scheme, dt, 0.1)
			require.Greater(t, dt, 100*operator.NewUniform(s.Alpha, s.Spacing()).StableDT())
			out := run(t, 2, s)
			errs = append(errs, maxErr(s, out.field, exact))
		}
		for i := 1; i < len(errs); i++ {
			r := errs[i-1] / errs[i]
			t.Logf("%v: error %.3e → %.3e, ratio %.2f", c.scheme, errs[i-1], errs[i], r)
			require.InDelta(t, c.ratio, r, 0.35*c.ratio/2, "%v", c.scheme)
		}
	}
}

// t_end with a step that does not divide it: the last step is shortened,
// and the run ends exactly at t_end (explicit and implicit alike).
func TestTEndShortensLastStep(t *testing.T) {
	for _, scheme := range []Scheme{Explicit, CrankNicolson} {
		s, exact := sineDecay([]int{32, 32}, scheme, 0, 0.01)
		s.DT = 0.9 * operator.NewUniform(s.Alpha, s.Spacing()).StableDT()
		if scheme != Explicit {
			s.DT = 0.0007
		}
		s.Steps = plan.StepsTo(s.TEnd, s.DT)
		require.NotEqual(t, float64(s.Steps)*s.DT, s.TEnd)
		var simTime float64
		err := local.Run(1, func(c comm.Comm) error {
			sv, err := New(c, s)
			if err != nil {
				return err
			}
			defer sv.Close()
			if err := sv.Run(context.Background()); err != nil {
				return err
			}
			simTime = sv.SimTime()
			f, err := sv.Gather()
			require.Less(t, maxErr(s, f, exact), 2e-3)
			return err
		})
		require.NoError(t, err)
		require.Equal(t, s.TEnd, simTime, "%v", scheme)
	}
}

// Implicit steps and Poisson by multigrid give the same bits on every rank
// count, process grid and thread count; each split also stops on the same
// cycle.
func TestMultigridRunsBitForBit(t *testing.T) {
	for _, shape := range [][]int{{40, 36}, {12, 16, 20}} {
		nd := len(shape)
		for _, kind := range []string{"poisson", "backward-euler", "crank-nicolson"} {
			s := heatSpec(shape)
			s.Faces[0] = [2]Face{{Kind: Dirichlet, Value: 1}, {Kind: Neumann}}
			s.Faces[nd-1] = [2]Face{{Kind: Periodic}, {Kind: Periodic}}
			s.Initial = Random(shape, 3, 1, 0)
			s.Source = Gaussian([]float64{0.3, 0.6, 0.5}[:nd], 0.2, 2, 0)
			s.Tolerance = 1e-9
			switch kind {
			case "poisson":
				s.Equation, s.Multigrid, s.Steps = Poisson, true, 40
				s.MG.Smoother = multigrid.RedBlack
			case "backward-euler":
				s.Scheme, s.DT, s.Steps = BackwardEuler, 0.01, 4
			default:
				s.Scheme, s.DT, s.TEnd = CrankNicolson, 0.01, 0.035
				s.Steps = plan.StepsTo(s.TEnd, s.DT)
			}
			var want outcome
			for i, sp := range []struct{ ranks, threads int }{{1, 1}, {2, 2}, {3, 1}, {4, 3}, {6, 1}} {
				s.Threads = sp.threads
				out := run(t, sp.ranks, s)
				if i == 0 {
					want = out
					continue
				}
				where := fmt.Sprintf("%v %s %+v", shape, kind, sp)
				require.Positive(t, out.messages, "%s: the multigrid's halo messages are counted", where)
				require.Equal(t, fingerprint(want.field), fingerprint(out.field), where)
				require.Equal(t, want.steps, out.steps, where)
				require.Equal(t, math.Float64bits(want.residual), math.Float64bits(out.residual), where)
			}
		}
	}
}

// An explicit run to t_end in temporal blocks of 3 steps gives the bits of
// one step at a time: the shortened last step runs on its own in both.
func TestTEndWithTemporalBlocking(t *testing.T) {
	s, _ := sineDecay([]int{24, 30}, Explicit, 0, 0.004)
	s.DT = 0.9 * operator.NewUniform(s.Alpha, s.Spacing()).StableDT()
	s.Steps = plan.StepsTo(s.TEnd, s.DT)
	s.Initial = Random(s.Shape, 2, 1, 0)
	want := run(t, 1, s)
	for _, ranks := range []int{1, 3} {
		s.Ghost = 3
		got := run(t, ranks, s)
		require.Equal(t, fingerprint(want.field), fingerprint(got.field), "ghost 3 on %d ranks", ranks)
		require.Equal(t, want.steps, got.steps)
	}
}

// Laplace's equation with no data (f = 0, zero Dirichlet faces) has the
// solution u = 0: multigrid measures its residual against the initial
// guess's (there is no ‖f‖ to divide by) and converges to it, on 1 and 3
// ranks alike.
func TestPoissonWithoutDataConverges(t *testing.T) {
	for _, shape := range [][]int{{32, 32}, {16, 16, 16}} {
		s := heatSpec(shape)
		s.Equation, s.Multigrid, s.Steps, s.Tolerance, s.CheckEvery = Poisson, true, 30, 1e-10, 1
		s.Initial = Hotspot([]float64{0.5, 0.5, 0.5}[:len(shape)], 0.2, 1, 0)
		var want string
		for _, ranks := range []int{1, 3} {
			out := run(t, ranks, s)
			require.True(t, out.converged, "%v on %d ranks: residual %v", shape, ranks, out.residual)
			require.Less(t, spread(out.field), 1e-8, "the hot spot of 1 gone to the rounding of the tolerance")
			if want == "" {
				want = fingerprint(out.field)
			}
			require.Equal(t, want, fingerprint(out.field))
		}
	}
}

// An implicit step whose only data is a held heater (zero faces, zero
// start, no source) is a real problem: the heater's flux into its free
// neighbours is the right side. Before, its norm was taken with the held
// cells at zero, so the relative residual was +Inf and step 1 failed.
func TestImplicitHeldHeaterFromZeroStart(t *testing.T) {
	shape := []int{40, 36}
	g := &globalMedia{shape: shape}
	cellCentres(shape, ones(2), func(i int, x []float64) {
		k, held := 1.0, math.NaN()
		if x[1] > 0.5 {
			k = 100
		}
		if d := math.Hypot(x[0]-0.3, x[1]-0.55); d < 0.08 {
			held = 1
		}
		g.k, g.rhoC, g.held = append(g.k, k), append(g.rhoC, 1), append(g.held, held)
	})
	for _, scheme := range []Scheme{BackwardEuler, CrankNicolson} {
		s := heatSpec(shape)
		s.Media, s.Scheme, s.DT, s.Steps, s.Tolerance = g.fn(), scheme, 1e-3, 4, 1e-10
		s.Initial = Constant(0)
		var want string
		for _, ranks := range []int{1, 3} {
			out := run(t, ranks, s)
			for _, w := range out.info.ComponentHistory { // each step's backward error
				require.Less(t, w, 1e-10, "%v on %d ranks", scheme, ranks)
			}
			hot := 0
			for i, v := range out.field {
				if g.held[i] != g.held[i] && v > 1e-3 {
					hot++
				}
			}
			require.Greater(t, hot, 10, "heat flowed from the heater")
			if want == "" {
				want = fingerprint(out.field)
			}
			require.Equal(t, want, fingerprint(out.field), "%v on %d ranks", scheme, ranks)
		}
	}
}

// Implicit steps solved by mgcg (CG preconditioned by one cycle): on a
// random two-material map (k 1 and 100, ρc 1 and 2, holes) where plain
// Crank–Nicolson cycles stop short (4.5e-7 after 50 at step 1), every step
// reaches the tolerance, with the same bits on every split.
func TestImplicitMGCGOnARandomMap(t *testing.T) {
	shape := []int{64, 96}
	r := Random(shape, 3, 1, 0)
	g := &globalMedia{shape: shape}
	for i := range shape[0] * shape[1] {
		x := r(nil, unflatten(shape, i))
		k, rc := 1.0, 1.0
		switch {
		case x < 0.5:
			k, rc = 100, 2
		case x < 0.53:
			k = 0
		}
		g.k, g.rhoC, g.held = append(g.k, k), append(g.rhoC, rc), append(g.held, math.NaN())
	}
	s := heatSpec(shape)
	s.Media, s.Scheme, s.DT, s.Steps, s.Tolerance = g.fn(), CrankNicolson, 1e-2, 3, 1e-10
	s.Multigrid, s.CG = true, true
	s.Initial = Random(shape, 5, 1, 0)
	var want string
	for _, rt := range [][2]int{{1, 1}, {3, 2}, {4, 1}} {
		s.Threads = rt[1]
		out := run(t, rt[0], s)
		cycles, res, field := out.info.Cycles, out.residual, out.field
		require.Less(t, res, 1e-10)
		require.LessOrEqual(t, cycles, 3*25, "iterations over 3 steps")
		if want == "" {
			want = fingerprint(field)
		}
		require.Equal(t, want, fingerprint(field), "ranks %d threads %d", rt[0], rt[1])
	}
}

// SDIRK4 is of order four: against the grid's own decay of a sine mode
// (exact in space: the discrete operator's eigenvalue λ_h), halving dt
// divides the error by 16; a stage's wrong coefficient drops the order.
// The steps are far beyond the explicit limit, and the field has the same
// bits on 1 and 3 ranks and 1 and 2 threads.
func TestSDIRK4IsFourthOrder(t *testing.T) {
	shape := []int{32, 32}
	const tEnd = 0.4
	lambda := 0.0
	for _, n := range shape {
		h := 1 / float64(n)
		lambda += 4 / (h * h) * math.Pow(math.Sin(math.Pi*h/2), 2)
	}
	var errs []float64
	for _, dt := range []float64{0.1, 0.05, 0.025} {
		s, _ := sineDecay(shape, SDIRK4, dt, tEnd)
		s.Tolerance = 1e-13
		exact := func(x []float64) float64 {
			return math.Exp(-s.Alpha*lambda*tEnd) * math.Sin(math.Pi*x[0]) * math.Sin(math.Pi*x[1])
		}
		require.Greater(t, dt, 100*operator.NewUniform(s.Alpha, s.Spacing()).StableDT())
		out := run(t, 1, s)
		errs = append(errs, maxErr(s, out.field, exact))
		if dt == 0.05 {
			out3 := run(t, 3, s)
			require.Equal(t, fingerprint(out.field), fingerprint(out3.field), "3 ranks")
			s.Threads = 2
			require.Equal(t, fingerprint(out.field), fingerprint(run(t, 1, s).field), "2 threads")
		}
	}
	for i := 1; i < len(errs); i++ {
		r := errs[i-1] / errs[i]
		t.Logf("sdirk4: error %.3e → %.3e, ratio %.2f", errs[i-1], errs[i], r)
		require.InDelta(t, 16, r, 4)
	}
}
