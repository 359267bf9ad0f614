package stencil

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// refVarBackward is VarBackwardKernel's contract written cell by cell: the
// residual from the residual kernel's formula (refVar), t summed term by
// term, every quotient taken (no cell skipped), NaN winning each maximum.
func refVarBackward(vc *varCase, k *VarCoeffs, data float64) (omega, res, big float64) {
	d := make([]float64, vc.dlen)
	refVar(varResidual, vc, k, d, vc.f)
	u := vc.u
	worse := func(m, x float64) float64 {
		if math.IsNaN(m) || math.IsNaN(x) {
			return math.NaN()
		}
		return max(m, x)
	}
	for r := range vc.rows {
		for j := range vc.n {
			i := vc.start + r*vc.stride + j
			a := math.Abs(u[i])
			t := float64(k.BX[i] * (math.Abs(u[i+1]) + a))
			if k.A != nil {
				t = math.Abs(float64(k.A[i]*u[i])) + t
			}
			t += float64(k.BX[i-1] * (a + math.Abs(u[i-1])))
			t += float64(k.BY[i] * (math.Abs(u[i+k.SY]) + a))
			t += float64(k.BY[i-k.SY] * (a + math.Abs(u[i-k.SY])))
			if vc.three {
				t += float64(k.BZ[i] * (math.Abs(u[i+k.SZ]) + a))
				t += float64(k.BZ[i-k.SZ] * (a + math.Abs(u[i-k.SZ])))
			}
			res, big = worse(res, math.Abs(d[i])), worse(big, a)
			if k.M[i] == 0 {
				continue
			}
			q := math.Abs(d[i])
			if den := t + max(math.Abs(vc.f[i]), data); den > 0 {
				q /= den
			}
			omega = worse(omega, q)
		}
	}
	return omega, res, big
}

// The backward error's pass: the generic kernel gives its contract's
// maxima (NaN as NaN), and every set the generic's bits, for rows of 1 to
// 37 cells (every tail after 0 to 4 whole vectors, and rows shorter than a
// vector), 1 to 5 rows, with and without A, in 2D and 3D, with NaNs and
// infinities among the operands and data 0, positive, −0, +∞ and NaN.
func TestVarBackwardMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	datas := []float64{0, 0, 0.5, 2, math.Copysign(0, -1), math.Inf(1), math.NaN()}
	same := func(want, got float64) bool {
		return (math.IsNaN(want) && math.IsNaN(got)) || math.Float64bits(want) == math.Float64bits(got)
	}
	for _, three := range []bool{false, true} {
		nd := map[bool]int{false: 2, true: 3}[three]
		for n := 1; n <= 37; n++ {
			for rows := 1; rows <= 5; rows++ {
				vc := newVarCase(rng, three, n, rows, (n+rows)%3 == 0)
				if n%5 == 0 {
					// Free cells, held ones (M = 0) and holes, as media have.
					for i := range vc.k.M {
						vc.k.M[i] = float64(rng.IntN(3) / 2)
					}
				}
				for _, withA := range []bool{false, true} {
					k := vc.k
					if !withA {
						k.A = nil
					}
					data := datas[(n+rows)%len(datas)]
					where := fmt.Sprintf("%v A=%v data=%v", vc, withA, data)
					wq, wr, wb := refVarBackward(vc, &k, data)
					gq, gr, gb := Generic.Var(nd).Backward(&k, vc.u, vc.f, data, vc.start, vc.n, vc.rows, vc.stride)
					require.True(t, same(wq, gq), "generic omega %v, want %v: %s", gq, wq, where)
					require.True(t, same(wr, gr), "generic res %v, want %v: %s", gr, wr, where)
					require.True(t, same(wb, gb), "generic big %v, want %v: %s", gb, wb, where)
					for _, ks := range Available()[1:] {
						q, m, b := ks.Var(nd).Backward(&k, vc.u, vc.f, data, vc.start, vc.n, vc.rows, vc.stride)
						require.Equal(t, []uint64{math.Float64bits(gq), math.Float64bits(gr), math.Float64bits(gb)},
							[]uint64{math.Float64bits(q), math.Float64bits(m), math.Float64bits(b)}, "%s vs generic: %s", ks.Name, where)
					}
				}
			}
		}
	}
}

// Its max |r| is the residual kernel's, bit for bit: the solvers' relative
// residual does not depend on which pass measured it.
func TestVarBackwardResidualIsTheResidualKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, three := range []bool{false, true} {
		nd := map[bool]int{false: 2, true: 3}[three]
		for _, n := range []int{3, 8, 29, 301} {
			vc := newVarCase(rng, three, n, 4, false)
			for _, ks := range Available() {
				d, _ := vc.run(ks, varResidual, true, true)
				want := 0.0
				for r := range vc.rows {
					i := vc.start + r*vc.stride
					want = max(want, MaxAbs(d[i:i+vc.n]))
				}
				_, got, _ := ks.Var(nd).Backward(&vc.k, vc.u, vc.f, 0, vc.start, vc.n, vc.rows, vc.stride)
				require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%s %v", ks.Name, vc)
			}
		}
	}
}

// StepError: the generic gives the contract's maximum (written cell by
// cell, NaN as NaN) and copies u into next where asked, touching nothing
// past it; every set gives the generic's bits, for rows of 0 to 37 cells
// with zeros, signed zeros, NaNs and infinities among the operands.
func TestStepErrorMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}
	for n := 0; n <= 37; n++ {
		for trial := range 4 {
			field := func() []float64 {
				x := make([]float64, n+3)
				for i := range x {
					x[i] = value(rng)
				}
				return x
			}
			u, v, w := field(), field(), field()
			if trial > 0 && n > 0 {
				x := [][]float64{u, v, w}[rng.IntN(3)]
				x[rng.IntN(n)] = special[rng.IntN(len(special))]
			}
			den, atol, rtol := 3.0, 1e-3*rng.Float64(), 1e-2*rng.Float64()
			want := 0.0
			nan := false
			for j := range n {
				e := math.Abs(u[j]-v[j]) / product(den, sum(atol, product(rtol, max(math.Abs(w[j]), math.Abs(u[j])))))
				if math.IsNaN(e) {
					nan = true
				}
				want = max(want, e)
			}
			if nan {
				want = math.NaN()
			}
			for _, ks := range Available() {
				for _, keep := range []bool{false, true} {
					var next []float64
					if keep {
						next = make([]float64, n+3)
						for i := range next {
							next[i] = poison
						}
					}
					got := ks.StepError(u[:n], v, w, next, den, atol, rtol)
					where := fmt.Sprintf("%s n=%d trial %d keep %v", ks.Name, n, trial, keep)
					if nan {
						require.True(t, math.IsNaN(got), where)
					} else {
						require.Equal(t, math.Float64bits(want), math.Float64bits(got), where)
					}
					if keep {
						require.Equal(t, bitsOf(u[:n]), bitsOf(next[:n]), "%s: next", where)
						require.Equal(t, bitsOf([]float64{poison, poison, poison}), bitsOf(next[n:]), "%s: past the row", where)
					}
				}
			}
		}
	}
}

// product and sum are a·b and a + b, each rounded on its own: calls, so
// that the compiler emits each as its own instruction (on arm64 it emitted
// the reference's atol + rtol·max(…) as a multiply-add despite float64(…)).
//
//go:noinline
func product(a, b float64) float64 { return a * b }

//go:noinline
func sum(a, b float64) float64 { return a + b }
