package amg

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// diffusion is the cell-centred 5-point operator −∇·(k∇u) on an ny×nx
// grid (h = 1, faces the harmonic mean of the cells beside them), with
// zero Dirichlet faces (a boundary face 2k_i) or, with neumann, none.
func diffusion(ny, nx int, k []float64, neumann bool) *Matrix {
	b := NewBuilder(ny*nx, 5*ny*nx)
	face := func(a, c float64) float64 { return 2 * a * c / (a + c) }
	for y := range ny {
		for x := range nx {
			i := y*nx + x
			d := 0.0
			add := func(yy, xx int) {
				if yy < 0 || yy >= ny || xx < 0 || xx >= nx {
					if !neumann {
						d += 2 * k[i]
					}
					return
				}
				f := face(k[i], k[yy*nx+xx])
				d += f
				b.Add(yy*nx+xx, -f)
			}
			add(y-1, x)
			add(y, x-1)
			b.Add(i, 0) // the diagonal's place, set below
			di := b.m.Nonzeros() - 1
			add(y, x+1)
			add(y+1, x)
			b.m.Val[di] = d
			b.EndRow()
		}
	}
	return b.Matrix()
}

func randomMap(n int, contrast float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 5))
	k := make([]float64, n)
	for i := range k {
		k[i] = 1
		if r.IntN(2) == 1 {
			k[i] = contrast
		}
	}
	return k
}

// pcg solves A·x = b by conjugate gradients preconditioned by one cycle
// of h, to a relative residual of tol, and returns the iterations.
func pcg(t *testing.T, a *Matrix, h *Hierarchy, b []float64, tol float64, most int) ([]float64, int) {
	n := a.Rows
	x, r, z, p, q := make([]float64, n), append([]float64(nil), b...), make([]float64, n), make([]float64, n), make([]float64, n)
	dot := func(u, v []float64) float64 {
		s := 0.0
		for i := range u {
			s += u[i] * v[i]
		}
		return s
	}
	b0 := math.Sqrt(dot(b, b))
	h.Cycle(z, r)
	copy(p, z)
	rz := dot(r, z)
	for it := 1; it <= most; it++ {
		a.MulVec(q, p)
		alpha := rz / dot(p, q)
		for i := range x {
			x[i] += alpha * p[i]
			r[i] -= alpha * q[i]
		}
		if math.Sqrt(dot(r, r)) <= tol*b0 {
			return x, it
		}
		h.Cycle(z, r)
		rzNew := dot(r, z)
		beta := rzNew / rz
		rz = rzNew
		for i := range p {
			p[i] = z[i] + beta*p[i]
		}
	}
	t.Fatalf("no convergence in %d iterations", most)
	return nil, 0
}

// The matrix products against dense ones.
func TestMulTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := func(rows, cols int) (*Matrix, [][]float64) {
		b := NewBuilder(cols, 0)
		d := make([][]float64, rows)
		for i := range rows {
			d[i] = make([]float64, cols)
			for j := range cols {
				if r.IntN(3) == 0 {
					v := r.NormFloat64()
					d[i][j] = v
					b.Add(j, v)
				}
			}
			b.EndRow()
		}
		return b.Matrix(), d
	}
	a, da := random(7, 5)
	c, dc := random(5, 6)
	prod := mul(nil, a, c)
	require.NoError(t, prod.check())
	for i := range 7 {
		want := make([]float64, 6)
		for k := range 5 {
			for j := range 6 {
				want[j] += da[i][k] * dc[k][j]
			}
		}
		got := make([]float64, 6)
		for k := prod.Ptr[i]; k < prod.Ptr[i+1]; k++ {
			got[prod.Col[k]] += prod.Val[k]
		}
		require.InDeltaSlice(t, want, got, 1e-12)
	}
	at := a.transpose()
	require.NoError(t, at.check())
	for j := range 5 {
		for k := at.Ptr[j]; k < at.Ptr[j+1]; k++ {
			require.Equal(t, da[at.Col[k]][j], at.Val[k])
		}
	}
}

// On the uniform operator a cycle reduces the residual by a factor well
// below 1, and the hierarchy coarsens (a few levels, operator complexity
// under 3).
func TestUniformCycle(t *testing.T) {
	n := 64
	k := make([]float64, n*n)
	for i := range k {
		k[i] = 1
	}
	a := diffusion(n, n, k, false)
	h, err := Setup(a, Options{})
	require.NoError(t, err)
	nnz := 0
	for _, l := range h.Levels {
		nnz += l.A.Nonzeros()
	}
	complexity := float64(nnz) / float64(a.Nonzeros())
	t.Logf("%d levels, operator complexity %.2f", len(h.Levels), complexity)
	require.Less(t, complexity, 3.0)
	require.Greater(t, len(h.Levels), 2)
	// A stationary iteration x += V(b − Ax).
	r := rand.New(rand.NewPCG(3, 4))
	b := make([]float64, n*n)
	for i := range b {
		b[i] = r.Float64()
	}
	x, res, z := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	norm := func() float64 {
		a.MulVec(res, x)
		s := 0.0
		for i := range res {
			res[i] = b[i] - res[i]
			s += res[i] * res[i]
		}
		return math.Sqrt(s)
	}
	before := norm()
	for range 8 {
		h.Cycle(z, res)
		for i := range x {
			x[i] += z[i]
		}
		norm()
	}
	factor := math.Pow(norm()/before, 1.0/8)
	t.Logf("convergence factor %.3f a cycle", factor)
	require.Less(t, factor, 0.3)
}

// Random two-material maps whose clusters of high k no halving can
// follow: CG preconditioned by a cycle converges in few iterations at any
// contrast, and the solution satisfies the matrix.
func TestRandomMaps(t *testing.T) {
	n := 128
	for _, contrast := range []float64{1e2, 1e4, 1e6} {
		k := randomMap(n*n, contrast, 1)
		a := diffusion(n, n, k, false)
		h, err := Setup(a, Options{})
		require.NoError(t, err)
		b := make([]float64, n*n)
		for i := range b {
			b[i] = 1
		}
		x, it := pcg(t, a, h, b, 1e-12, 40)
		t.Logf("contrast %g: %d levels, %d iterations", contrast, len(h.Levels), it)
		require.LessOrEqual(t, it, 15)
		// Each row to a few ulps of its own terms (Oettli–Prager).
		for i := range a.Rows {
			r, mag := b[i], math.Abs(b[i])
			for k := a.Ptr[i]; k < a.Ptr[i+1]; k++ {
				r -= a.Val[k] * x[a.Col[k]]
				mag += math.Abs(a.Val[k] * x[a.Col[k]])
			}
			require.Less(t, math.Abs(r)/mag, 1e-12, "row %d", i)
		}
	}
}

// Without Dirichlet faces the operator is singular: a consistent right
// side (zero sum) is solved all the same.
func TestSingular(t *testing.T) {
	n := 40
	k := randomMap(n*n, 1e3, 2)
	a := diffusion(n, n, k, true)
	h, err := Setup(a, Options{})
	require.NoError(t, err)
	b := make([]float64, n*n)
	for i := range b {
		b[i] = math.Sin(float64(i))
	}
	mean := 0.0
	for _, v := range b {
		mean += v
	}
	mean /= float64(len(b))
	for i := range b {
		b[i] -= mean
	}
	_, it := pcg(t, a, h, b, 1e-10, 60)
	t.Logf("%d iterations", it)
	require.LessOrEqual(t, it, 20)
}

// A hierarchy built once from the conduction L serves every step length:
// after SetMass and Scale(σ, β) each level is the Galerkin product of the
// level above's σ·M + β·L through the same interpolation (to rounding),
// and CG preconditioned by it solves σ·M + β·L on a random 10⁴ map in as
// few iterations for steps from 10⁻⁴ to 10⁴ (the mass alone to the
// conduction alone) as a hierarchy set up for that matrix.
func TestScaledHierarchy(t *testing.T) {
	const n = 96
	k := randomMap(n*n, 1e4, 9)
	l := diffusion(n, n, k, false)
	h, err := Setup(cloneMatrix(l), Options{})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(4, 4))
	mass := make([]float64, n*n)
	for i := range mass {
		mass[i] = 1 + r.Float64() // ρc from 1 to 2
	}
	require.Error(t, h.Scale(1, 1), "no mass yet")
	require.NoError(t, h.SetMass(mass))
	b := make([]float64, n*n)
	for i := range b {
		b[i] = r.Float64() - 0.5
	}
	for _, beta := range []float64{1e-4, 1e-2, 1, 1e2, 1e4} {
		require.NoError(t, h.Scale(1, beta))
		// The matrix σ·M + β·L itself, and the levels' products.
		a := cloneMatrix(l)
		for i := range a.Rows {
			for p := a.Ptr[i]; p < a.Ptr[i+1]; p++ {
				a.Val[p] *= beta
				if int(a.Col[p]) == i {
					a.Val[p] += mass[i]
				}
			}
		}
		want := a
		for li, lev := range h.Levels {
			require.Equal(t, want.Ptr, lev.A.Ptr, "β %g, level %d: pattern", beta, li)
			for i := range want.Rows {
				// To rounding of the row's largest terms (its diagonal).
				tol := 1e-12 * want.diag(i)
				for p := want.Ptr[i]; p < want.Ptr[i+1]; p++ {
					require.InDelta(t, want.Val[p], lev.A.Val[p], tol, "β %g, level %d, row %d", beta, li, i)
				}
			}
			if lev.P != nil {
				want = mul(nil, lev.R, mul(nil, lev.A, lev.P))
			}
		}
		_, its := pcg(t, a, h, b, 1e-10, 40)
		fresh, err := Setup(cloneMatrix(a), Options{})
		require.NoError(t, err)
		_, itsFresh := pcg(t, a, fresh, b, 1e-10, 40)
		t.Logf("β %g: %d iterations with the scaled hierarchy, %d with its own", beta, its, itsFresh)
		require.LessOrEqual(t, its, max(itsFresh+3, 12), "β %g", beta)
	}
	// Back to the conduction alone: the hierarchy Setup built, bit for bit.
	require.NoError(t, h.Scale(0, 1))
	again, err := Setup(cloneMatrix(l), Options{})
	require.NoError(t, err)
	for li, lev := range h.Levels {
		require.Equal(t, again.Levels[li].A.Val, lev.A.Val, "level %d", li)
	}
}

func cloneMatrix(a *Matrix) *Matrix {
	return &Matrix{Rows: a.Rows, Cols: a.Cols, Ptr: slices.Clone(a.Ptr), Col: slices.Clone(a.Col), Val: slices.Clone(a.Val)}
}

// splitIn is a Parallel of parts parts, each on its own goroutine, of
// uneven sizes.
func splitIn(parts int) Parallel {
	return func(n int, f func(lo, hi int)) {
		var wg sync.WaitGroup
		lo := 0
		for p := range parts {
			hi := n * (p + 1) * (p + 2) / (parts * (parts + 1))
			if p == parts-1 {
				hi = n
			}
			from := lo
			wg.Go(func() { f(from, hi) })
			lo = hi
		}
		wg.Wait()
	}
}

// The setup split over goroutines builds the same hierarchy, bit for bit,
// as in one: the levels' matrices, interpolations and the scaled sums; and
// its cycle gives the same bits.
func TestParallelSetupSameBits(t *testing.T) {
	const n = 80
	l := diffusion(n, n, randomMap(n*n, 1e4, 5), false)
	mass := make([]float64, n*n)
	for i := range mass {
		mass[i] = 1 + float64(i%7)/7
	}
	build := func(par Parallel) *Hierarchy {
		h, err := Setup(cloneMatrix(l), Options{Parallel: par})
		require.NoError(t, err)
		require.NoError(t, h.SetMass(mass))
		require.NoError(t, h.Scale(1, 0.3))
		return h
	}
	one := build(nil)
	require.Greater(t, len(one.Levels), 3)
	b := make([]float64, n*n)
	for i := range b {
		b[i] = float64(i%11) - 5
	}
	want := make([]float64, n*n)
	one.Cycle(want, b)
	for _, parts := range []int{2, 3, 7} {
		h := build(splitIn(parts))
		require.Len(t, h.Levels, len(one.Levels))
		for i, lev := range h.Levels {
			want := one.Levels[i]
			require.Equal(t, want.A, lev.A, "%d parts, level %d: A", parts, i)
			require.Equal(t, want.P, lev.P, "%d parts, level %d: P", parts, i)
		}
		x := make([]float64, n*n)
		h.Cycle(x, b)
		require.Equal(t, want, x, "%d parts: a cycle (its residuals, restrictions and interpolations split)", parts)
	}
}
