package stencil

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// refResidual is the residual's reference formula of kernel.go, cell by
// cell.
func refResidual(k *Coeffs, r *Row) {
	for j := range r.D {
		w, m, e := r.C[j], r.C[j+1], r.C[j+2]
		inner := float64(k.CX*(w+e)) + float64(k.CY*(r.S[j]+r.N[j]))
		if r.L != nil {
			inner += float64(k.CZ * (r.L[j] + r.U[j]))
		}
		r.D[j] = r.F[j] - (float64(k.C0*m) - inner)
	}
}

// refRow is the reference loop of kernel.go written out cell by cell: each
// product rounded on its own (the float64 conversions forbid fusing), the
// terms summed left to right.
func refRow(k *Coeffs, r *Row) {
	for j := range r.D {
		w, m, e := r.C[j], r.C[j+1], r.C[j+2]
		v := float64(k.C0*m) + float64(k.CX*(w+e)) + float64(k.CY*(r.S[j]+r.N[j]))
		if r.L != nil {
			v += float64(k.CZ * (r.L[j] + r.U[j]))
		}
		if r.F != nil {
			v += float64(k.CF * r.F[j])
		}
		r.D[j] = v
	}
}

// NaNs with payloads of their own: operandGuard fills the guard cells of
// operands, destGuard those of destinations, and poison a destination's
// row before a kernel runs. Arithmetic on a NaN passes its payload on, so
// a value computed from an operand's guard and stored into a destination's
// guard still shows.
var (
	operandGuard = math.Float64frombits(0x7ff8_dead_0000_beef)
	destGuard    = math.Float64frombits(0x7ff8_feed_0000_cafe)
	poison       = math.Float64frombits(0x7ff8_0bad_0000_f00d)
)

// guarded is a slice of n cells between NaN guard cells, after gonum's
// guarded vectors: a kernel that writes past its row shows up in the
// guards, one that reads past it gets a NaN.
type guarded struct {
	all   []float64
	lo, n int
	guard float64
}

func newGuarded(n, lo int, guard float64, fill func() float64) guarded {
	g := guarded{all: make([]float64, lo+n+5), lo: lo, n: n, guard: guard}
	for i := range g.all {
		g.all[i] = guard
	}
	for i := range n {
		g.all[lo+i] = fill()
	}
	return g
}

// view is the n cells; its capacity runs into the upper guard.
func (g guarded) view() []float64 { return g.all[g.lo : g.lo+g.n] }

func (g guarded) bits() []uint64 {
	b := make([]uint64, len(g.all))
	for i, x := range g.all {
		b[i] = math.Float64bits(x)
	}
	return b
}

// guardsIntact reports the first guard cell that no longer holds its guard.
func (g guarded) guardsIntact() error {
	for i, x := range g.all {
		if (i < g.lo || i >= g.lo+g.n) && math.Float64bits(x) != math.Float64bits(g.guard) {
			return fmt.Errorf("guard cell %d (row is [%d, %d)) written: %v", i, g.lo, g.lo+g.n, x)
		}
	}
	return nil
}

// value is a random finite operand in ±[2⁻⁴, 2⁴), so sums and products
// round in many different ways.
func value(rng *rand.Rand) float64 {
	return (2*rng.Float64() - 1) * math.Ldexp(1, rng.IntN(9)-4)
}

// kernelCase is one row update with guarded operands.
type kernelCase struct {
	nd               int
	k                Coeffs
	c, s, n, l, u, f guarded
	operands         []guarded
}

// newKernelCase draws random weights (heat-like, or Jacobi-like with
// c0 = 1 − ω) and guarded random operands for a row of n cells, each
// starting off cells into its allocation (off < 0: a random offset each).
func newKernelCase(rng *rand.Rand, jacobi bool, nd, n int, source bool, off int) *kernelCase {
	kc := &kernelCase{nd: nd}
	h := []float64{0.5 + rng.Float64(), 0.5 + rng.Float64(), 0.5 + rng.Float64()}
	kc.k.CX, kc.k.CY = 0.1*rng.Float64()/(h[0]*h[0]), 0.1*rng.Float64()/(h[1]*h[1])
	if nd == 3 {
		kc.k.CZ = 0.1 * rng.Float64() / (h[2] * h[2])
	}
	kc.k.C0, kc.k.CF = 1-2*(kc.k.CX+kc.k.CY+kc.k.CZ), 1
	if jacobi {
		// Weighted Jacobi: c0 = 1 − ω, the source weighted by ω.
		omega := 0.5 + rng.Float64()
		kc.k.C0, kc.k.CF = 1-omega, omega
	}
	// Each operand starts at its own offset, so vectors straddle cache
	// lines differently.
	op := func(m int) guarded {
		lo := 1 + off
		if off < 0 {
			lo = 1 + rng.IntN(8)
		}
		g := newGuarded(m, lo, operandGuard, func() float64 { return value(rng) })
		kc.operands = append(kc.operands, g)
		return g
	}
	kc.c, kc.s, kc.n = op(n+2), op(n), op(n)
	if nd == 3 {
		kc.l, kc.u = op(n), op(n)
	}
	if source {
		kc.f = op(n)
	}
	return kc
}

// args are the operands with d as destination.
func (kc *kernelCase) args(d []float64) *Row {
	r := &Row{D: d, C: kc.c.view(), S: kc.s.view(), N: kc.n.view()}
	if kc.nd == 3 {
		r.L, r.U = kc.l.view(), kc.u.view()
	}
	if kc.f.all != nil {
		r.F = kc.f.view()
	}
	return r
}

// run applies rk to a fresh guarded destination prefilled with poison,
// starting off cells into its allocation.
func (kc *kernelCase) run(n, off int, rk Kernel) guarded {
	d := newGuarded(n, 1+off, destGuard, func() float64 { return poison })
	rk(&kc.k, kc.args(d.view()))
	return d
}

func bitsOf(x []float64) []uint64 {
	b := make([]uint64, len(x))
	for i, v := range x {
		b[i] = math.Float64bits(v)
	}
	return b
}

func (kc *kernelCase) String() string {
	return fmt.Sprintf("%dD c0=%.3g source=%v", kc.nd, kc.k.C0, kc.f.all != nil)
}

// Every kernel set of this build and CPU computes, for every row length
// from 1 to 41 (five 8-wide vectors and one cell: every tail length after
// 0 to 5 whole vectors of either width) and every alignment of the row
// (0 to 7 cells into its allocation, the destination on its own), exactly
// the bits of the generic kernel, which computes exactly the bits of the
// reference loop, for the update (heat-like and Jacobi-like weights, with
// and without a source) and the residual, in 2D and 3D. No kernel writes
// outside its row (NaN guard cells around every row) or into its operands.
func TestKernelsMatchReferenceBitForBit(t *testing.T) {
	sets := Available()
	require.Equal(t, "generic", sets[0].Name)
	require.Equal(t, Active.Name, sets[len(sets)-1].Name, "New uses the fastest set")
	for _, ks := range sets {
		t.Logf("kernel set %q: tested", ks.Name)
	}
	for _, name := range missingSets() {
		t.Logf("kernel set %q: skipped, this CPU or build lacks it", name)
	}
	type kind struct {
		name        string
		jacobi, res bool
		source      bool
		stream      bool
	}
	kinds := []kind{{"heat", false, false, false, false}, {"heat+source", false, false, true, false}, {"jacobi", true, false, true, false},
		{"residual", false, true, true, false}, {"heat, streaming", false, false, false, true}, {"jacobi, streaming", true, false, true, true}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, kd := range kinds {
		for _, nd := range []int{2, 3} {
			for n := 1; n <= 5*8+1; n++ {
				for off := range 8 {
					kc := newKernelCase(rng, kd.jacobi, nd, n, kd.source, off)
					before := make([][]uint64, len(kc.operands))
					for i, g := range kc.operands {
						before[i] = g.bits()
					}
					pick := func(ks Set) Kernel {
						switch {
						case kd.res:
							return ks.Residual(nd)
						case kd.stream:
							return ks.Stream(nd)
						}
						return ks.Pick(nd)
					}
					ref := make([]float64, n)
					if kd.res {
						refResidual(&kc.k, kc.args(ref))
					} else {
						refRow(&kc.k, kc.args(ref))
					}
					gen := kc.run(n, (off+3)%8, pick(Generic))
					require.Equal(t, bitsOf(ref), bitsOf(gen.view()), "generic vs reference loop, %s %v n=%d", kd.name, kc, n)
					for _, ks := range sets {
						d := kc.run(n, (off+3)%8, pick(ks))
						where := fmt.Sprintf("%s %s, %v n=%d offset %d", ks.Name, kd.name, kc, n, off)
						require.Equal(t, bitsOf(gen.view()), bitsOf(d.view()), "vs generic: %s", where)
						require.NoError(t, d.guardsIntact(), where)
						for i, g := range kc.operands {
							require.Equal(t, before[i], g.bits(), "changed operand %d: %s", i, where)
						}
					}
				}
			}
		}
	}
}

// missingSets are the vector sets heat has that this build and CPU cannot
// run.
func missingSets() []string {
	var out []string
	for _, name := range []string{"avx2", "avx512"} {
		if Select(name) != nil {
			out = append(out, name)
		}
	}
	_ = Select("")
	return out
}

// BenchmarkKernel times one row update alone, operands in L1 (n=256) or L2
// (n=4096), for every kernel set: the Set without the solver around
// them.
func BenchmarkKernel(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, nd := range []int{2, 3} {
		for _, source := range []bool{false, true} {
			for _, n := range []int{64, 256, 4096} {
				kc := newKernelCase(rng, false, nd, n, source, 0)
				d := make([]float64, n)
				r := kc.args(d)
				for _, ks := range Available() {
					rk := ks.Pick(nd)
					b.Run(fmt.Sprintf("dims=%d/source=%v/n=%d/kernel=%s", nd, source, n, ks.Name), func(b *testing.B) {
						b.SetBytes(int64(8 * n))
						for b.Loop() {
							rk(&kc.k, r)
						}
						b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
					})
				}
			}
		}
	}
}

// The max-norms of every set agree with the reference (the largest |x| or
// |a − b|, NaN if any is NaN) at every length 1..41 and alignment 0..7,
// with infinities, signed zeros and NaNs placed anywhere, and read nothing
// outside their rows (a NaN guard read would turn the result into NaN).
func TestMaxNormsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	special := []float64{math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, math.NaN(), 1e300, -1e-300}
	ref := func(a, b []float64) float64 {
		m := 0.0
		for j := range a {
			d := a[j]
			if b != nil {
				d -= b[j]
			}
			if d != d {
				return math.NaN()
			}
			m = max(m, math.Abs(d))
		}
		return m
	}
	same := func(want, got float64) bool {
		return (math.IsNaN(want) && math.IsNaN(got)) || want == got
	}
	for n := 1; n <= 41; n++ {
		for off := range 8 {
			for trial := range 4 {
				a := newGuarded(n, 1+off, operandGuard, func() float64 { return value(rng) })
				b := newGuarded(n, 1+(off+5)%8, operandGuard, func() float64 { return value(rng) })
				if trial > 0 {
					a.view()[rng.IntN(n)] = special[rng.IntN(len(special))]
					b.view()[rng.IntN(n)] = special[rng.IntN(len(special))]
				}
				wantDiff, want := ref(a.view(), b.view()), ref(a.view(), nil)
				for _, ks := range Available() {
					restore := Use(ks)
					gotDiff, got := MaxAbsDiff(a.view(), b.view()), MaxAbs(a.view())
					restore()
					require.True(t, same(wantDiff, gotDiff), "%s MaxAbsDiff n=%d offset %d: %v, want %v", ks.Name, n, off, gotDiff, wantDiff)
					require.True(t, same(want, got), "%s MaxAbs n=%d offset %d: %v, want %v", ks.Name, n, off, got, want)
				}
			}
		}
	}
}

// A many-row update gives, on every set, the bits of the generic kernel
// row by row, for row lengths around the vector widths, 1 to 5 rows, 2D and
// 3D, with and without a source, and writes nothing between the rows (the
// destination's ghost cells stay NaN).
func TestRowsKernelsMatchRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, nd := range []int{2, 3} {
		for _, n := range []int{1, 3, 4, 7, 8, 9, 16, 17, 25, 64} {
			for _, rows := range []int{1, 2, 5} {
				for _, source := range []bool{false, true} {
					k, src, f, size := rowsGrid(rng, nd, n, rows)
					sy, start := k.SY, k.SY+1+k.SZ
					var fs []float64
					if source {
						fs = f
					}
					want := make([]float64, size+8)
					for i := range want {
						want[i] = destGuard
					}
					for i := range rows {
						var r Row
						k.At(&r, want, src, fs, start+i*sy, n)
						Generic.Pick(nd)(&k, &r)
					}
					// The check's reference: the largest change, row by row.
					wantMax := 0.0
					for i := range rows {
						a := start + i*sy
						wantMax = max(wantMax, maxAbsDiffRef(want[a:a+n], src[a:a+n]))
					}
					for _, ks := range Available() {
						got := make([]float64, size+8)
						for i := range got {
							got[i] = destGuard
						}
						var r Row
						k.At(&r, got, src, fs, start, n)
						ks.Rows(nd)(&k, &r, rows, sy)
						where := fmt.Sprintf("%s: %dD n=%d rows=%d source=%v", ks.Name, nd, n, rows, source)
						require.Equal(t, bitsOf(want), bitsOf(got), where)
						checked := make([]float64, size+8)
						for i := range checked {
							checked[i] = destGuard
						}
						k.At(&r, checked, src, fs, start, n)
						m := ks.Check(nd)(&k, &r, rows, sy)
						require.Equal(t, bitsOf(want), bitsOf(checked), "check: "+where)
						require.Equal(t, math.Float64bits(wantMax), math.Float64bits(m), "check's max: "+where)
						// The residual (it always reads f), many rows a call.
						wantRes, gotRes := make([]float64, size+8), make([]float64, size+8)
						for i := range wantRes {
							wantRes[i], gotRes[i] = destGuard, destGuard
						}
						for i := range rows {
							k.At(&r, wantRes, src, f, start+i*sy, n)
							Generic.Residual(nd)(&k, &r)
						}
						k.At(&r, gotRes, src, f, start, n)
						ks.ResidualRows(nd)(&k, &r, rows, sy)
						require.Equal(t, bitsOf(wantRes), bitsOf(gotRes), "residual: "+where)
					}
				}
			}
		}
	}
}

// Mix, MixAdd and the Dirichlet ghost rows of ApplyFaces give every set the
// generic bits at every length 1..41 and alignment, and write only their row.
func TestMixAndReflectMatchGeneric(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for n := 1; n <= 41; n++ {
		for off := range 8 {
			a := newGuarded(n, 1+off, operandGuard, func() float64 { return value(rng) })
			b := newGuarded(n, 1+(off+3)%8, operandGuard, func() float64 { return value(rng) })
			init := newGuarded(n, 1+(off+5)%8, destGuard, func() float64 { return value(rng) })
			wa, wb := rng.Float64(), rng.Float64()
			want, wantAdd, wantRefl := make([]float64, n), slices.Clone(init.view()), make([]float64, n)
			mixGeneric(want, a.view(), b.view(), wa, wb)
			mixAddGeneric(wantAdd, a.view(), b.view(), wa, wb)
			for j, x := range a.view() {
				wantRefl[j] = 2*wa - x
			}
			for _, ks := range Available() {
				restore := Use(ks)
				d := newGuarded(n, 1+(off+5)%8, destGuard, func() float64 { return poison })
				Mix(d.view(), a.view(), b.view(), wa, wb)
				dAdd := newGuarded(n, 1+(off+5)%8, destGuard, func() float64 { return 0 })
				copy(dAdd.view(), init.view())
				MixAdd(dAdd.view(), a.view(), b.view(), wa, wb)
				refl := newGuarded(n, 1+(off+5)%8, destGuard, func() float64 { return poison })
				ks.reflect(refl.view(), a.view(), 2*wa)
				restore()
				require.Equal(t, bitsOf(wantRefl), bitsOf(refl.view()), "%s reflect n=%d offset %d", ks.Name, n, off)
				require.NoError(t, refl.guardsIntact())
				require.Equal(t, bitsOf(want), bitsOf(d.view()), "%s Mix n=%d offset %d", ks.Name, n, off)
				require.Equal(t, bitsOf(wantAdd), bitsOf(dAdd.view()), "%s MixAdd n=%d offset %d", ks.Name, n, off)
				require.NoError(t, d.guardsIntact())
				require.NoError(t, dAdd.guardsIntact())
			}
		}
	}
}

// maxAbsDiffRef is max |a[j] − b[j]|, NaN if any is NaN, written plainly.
func maxAbsDiffRef(a, b []float64) float64 {
	m := 0.0
	for j := range a {
		d := math.Abs(a[j] - b[j])
		if d != d {
			return math.NaN()
		}
		m = max(m, d)
	}
	return m
}

// The multigrid's transfers give every set the bits of the plain formulas
// at every coarse length 1..41 and alignment, and write only their row.
func TestTransfersMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	fill := func() float64 { return value(rng) }
	for n := 1; n <= 41; n++ {
		for off := range 8 {
			rows := make([]guarded, 4)
			for k := range rows {
				rows[k] = newGuarded(2*n, 1+(off+2*k)%8, operandGuard, fill)
			}
			coarse := newGuarded(n+2, 1+(off+3)%8, operandGuard, fill)
			a, b, c, e := rows[0].view(), rows[1].view(), rows[2].view(), rows[3].view()
			w, near, far := 1/8.0, 0.75, 0.25
			want2, want3, wantI := make([]float64, n), make([]float64, n), make([]float64, 2*n)
			for j := range n {
				pa, pb, pc, pe := a[2*j]+a[2*j+1], b[2*j]+b[2*j+1], c[2*j]+c[2*j+1], e[2*j]+e[2*j+1]
				want2[j] = (pa + pb) * w
				want3[j] = ((pa + pb) + (pc + pe)) * w
				s := coarse.view()
				// Each product rounded on its own (arm64 would fuse
				// them): the bits of every architecture's build.
				wantI[2*j] = float64(near*s[j+1]) + float64(far*s[j])
				wantI[2*j+1] = float64(near*s[j+1]) + float64(far*s[j+2])
			}
			for _, ks := range Available() {
				restore := Use(ks)
				d2 := newGuarded(n, 1+(off+5)%8, destGuard, func() float64 { return poison })
				Restrict2D(d2.view(), a, b, w)
				d3 := newGuarded(n, 1+(off+6)%8, destGuard, func() float64 { return poison })
				Restrict3D(d3.view(), a, b, c, e, w)
				di := newGuarded(2*n, 1+(off+7)%8, destGuard, func() float64 { return poison })
				Interp(di.view(), coarse.view(), near, far)
				restore()
				where := fmt.Sprintf("%s n=%d offset %d", ks.Name, n, off)
				require.Equal(t, bitsOf(want2), bitsOf(d2.view()), "Restrict2D "+where)
				require.Equal(t, bitsOf(want3), bitsOf(d3.view()), "Restrict3D "+where)
				require.Equal(t, bitsOf(wantI), bitsOf(di.view()), "Interp "+where)
				for _, g := range []guarded{d2, d3, di} {
					require.NoError(t, g.guardsIntact(), where)
				}
			}
		}
	}
}

// rowsGrid is a random source field and source term for rows rows of n
// cells (plus padding; in 3D three planes of them, the rows in the middle
// one) and the weights and strides over it; size is the field's cells
// before 8 of slack.
func rowsGrid(rng *rand.Rand, nd, n, rows int) (k Coeffs, src, f []float64, size int) {
	w := n + 2 + rng.IntN(3) // the row stride, ghosts and padding
	sy, sz := w, 0
	size = (rows + 2) * w
	if nd == 3 {
		sz = size
		size *= 3
	}
	src, f = make([]float64, size+8), make([]float64, size+8)
	for i := range src {
		src[i], f[i] = value(rng), value(rng)
	}
	k = Coeffs{SY: sy, SZ: sz, C0: 0.3, CX: 0.2 * rng.Float64(), CY: 0.2 * rng.Float64(), CZ: 0.1, CF: 0.7}
	return k, src, f, size
}

// With W and E on, every set's update, check and streaming update set each
// row's x ghosts as a face would (reflected or mirrored from the end cell), change
// nothing else of the source, and give the bits of the generic kernel on a
// source whose ghosts were set beforehand — at row lengths around the vector
// widths, 1 and 3 rows, 2D and 3D, with and without a source term.
func TestRowEdgesSetTheFaceGhosts(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	edges := []Edge{{}, {On: true}, {On: true, Reflect: true, Twice: 1.4}} // off, mirrored, reflected through 0.7
	for _, nd := range []int{2, 3} {
		for _, n := range []int{1, 3, 4, 7, 8, 9, 16, 17, 25} {
			for _, rows := range []int{1, 3} {
				for _, source := range []bool{false, true} {
					for _, west := range edges {
						for _, east := range edges {
							k, src, f, size := rowsGrid(rng, nd, n, rows)
							sy, start := k.SY, k.SY+1+k.SZ
							var fs []float64
							if source {
								fs = f
							}
							// The reference: the ghosts set beforehand, no edges.
							ref := slices.Clone(src)
							for i := range rows {
								a := start + i*sy
								if west.On {
									ref[a-1] = west.ghost(ref[a])
								}
								if east.On {
									ref[a+n] = east.ghost(ref[a+n-1])
								}
							}
							want := make([]float64, size+8)
							var r Row
							k.At(&r, want, ref, fs, start, n)
							wantMax := Generic.Check(nd)(&k, &r, rows, sy)
							for _, ks := range Available() {
								for _, kind := range []string{"rows", "check", "stream"} {
									if kind == "stream" && rows > 1 {
										continue // one row a call
									}
									got, in := make([]float64, size+8), slices.Clone(src)
									k.At(&r, got, in, fs, start, n)
									r.W, r.E = west, east
									where := fmt.Sprintf("%s: %dD n=%d rows=%d source=%v west=%v east=%v %s", ks.Name, nd, n, rows, source, west, east, kind)
									switch kind {
									case "check":
										m := ks.Check(nd)(&k, &r, rows, sy)
										require.Equal(t, math.Float64bits(wantMax), math.Float64bits(m), "max: "+where)
									case "stream":
										ks.Stream(nd)(&k, &r)
									default:
										ks.Rows(nd)(&k, &r, rows, sy)
									}
									r.W, r.E = Edge{}, Edge{}
									require.Equal(t, bitsOf(want), bitsOf(got), where)
									require.Equal(t, bitsOf(ref), bitsOf(in), "the source, ghosts set: "+where)
								}
							}
						}
					}
				}
			}
		}
	}
}

// refBackward is BackwardKernel's formula written plainly, cell by cell
// over the rows: the largest q, |r| and |m|, NaN if any is NaN.
func refBackward(k *Coeffs, r *Row, rows, stride int, data float64) (omega, res, big float64) {
	top := func(m, x float64) float64 {
		if m != m || x != x {
			return math.NaN()
		}
		return max(m, x)
	}
	// Each operand up to its capacity: the later rows lie there.
	all := func(x []float64) []float64 { return x[:cap(x)] }
	c, s, n, l, u, fs := all(r.C), all(r.S), all(r.N), all(r.L), all(r.U), all(r.F)
	for i := range rows {
		for j := range r.F {
			o := i*stride + j
			w, m, e, f := c[o], c[o+1], c[o+2], fs[o]
			x := float64(k.CX*(w+e)) + float64(k.CY*(s[o]+n[o]))
			t := float64(k.CX*(math.Abs(w)+math.Abs(e))) + float64(k.CY*(math.Abs(s[o])+math.Abs(n[o])))
			if r.L != nil {
				x += float64(k.CZ * (l[o] + u[o]))
				t += float64(k.CZ * (math.Abs(l[o]) + math.Abs(u[o])))
			}
			rj := f - (float64(k.C0*m) - x)
			bound := math.Abs(f) // NaN if either is, else the larger
			if data != data || data > bound {
				bound = data
			}
			den := float64(k.C0*math.Abs(m)) + t + bound
			q := math.Abs(rj)
			if den > 0 {
				q /= den
			}
			omega, res, big = top(omega, q), top(res, math.Abs(rj)), top(big, math.Abs(m))
		}
	}
	return omega, res, big
}

// backwardGrid is a field and a right side for rows rows of n cells (in 3D
// the middle plane of three), NaN guards (operandGuard) in every cell the
// rows do not read; fill gives each cell read. The rows start at start,
// k.SY apart.
func backwardGrid(rng *rand.Rand, nd, n, rows int, fill func() float64) (k Coeffs, src, f []float64, start int) {
	sy := n + 2 + rng.IntN(3)
	sz := 0
	size := (rows + 2) * sy
	if nd == 3 {
		sz, size = size, 3*size
	}
	src, f = make([]float64, size), make([]float64, size)
	for i := range src {
		src[i], f[i] = operandGuard, operandGuard
	}
	start = sz + sy + 1
	set := func(x []float64, lo, hi int) {
		for i := lo; i < hi; i++ {
			if math.Float64bits(x[i]) == math.Float64bits(operandGuard) {
				x[i] = fill()
			}
		}
	}
	for i := range rows {
		a := start + i*sy
		set(src, a-1, a+n+1)
		set(f, a, a+n)
		for _, d := range []int{sy, sz} {
			if d != 0 {
				set(src, a-d, a-d+n)
				set(src, a+d, a+d+n)
			}
		}
	}
	k = Coeffs{SY: sy, SZ: sz, C0: 2*rng.Float64() - 0.5, CX: 0.2 * rng.Float64(), CY: 0.2 * rng.Float64()}
	if nd == 3 {
		k.CZ = 0.2 * rng.Float64()
	}
	return k, src, f, start
}

// The backward error's pass gives, on every set, the bits of the generic
// kernel, and the generic kernel those of the formula, for row lengths 1
// to 27 (every tail after 0 to 3 vectors of either width), 1 to 3 rows, 2D
// and 3D, c0 of either sign (so that some den ≤ 0), data 0, ±0, finite,
// +∞ or NaN, with a NaN, an infinity or a zero placed anywhere; it reads
// nothing outside the rows (a NaN guard read would show).
func TestBackwardMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}
	datas := []float64{0, 0, 0.5, 2, math.Copysign(0, -1), math.Inf(1), math.NaN()}
	same := func(want, got float64) bool {
		return (math.IsNaN(want) && math.IsNaN(got)) || math.Float64bits(want) == math.Float64bits(got)
	}
	for _, nd := range []int{2, 3} {
		for n := 1; n <= 3*8+3; n++ {
			for _, rows := range []int{1, 2, 3} {
				for trial := range 3 {
					k, src, f, start := backwardGrid(rng, nd, n, rows, func() float64 { return value(rng) })
					if trial > 0 {
						// One special value in a cell the rows read.
						x := special[rng.IntN(len(special))]
						for {
							i := rng.IntN(len(src))
							if !math.IsNaN(src[i]) {
								src[i] = x
								break
							}
						}
					}
					var r Row
					k.At(&r, src, src, f, start, n)
					r.D = nil // unused
					data := datas[(n+rows+trial)%len(datas)]
					where := fmt.Sprintf("%dD n=%d rows=%d data=%v trial %d", nd, n, rows, data, trial)
					wq, wr, wb := refBackward(&k, &r, rows, k.SY, data)
					gq, gr, gb := Generic.Backward(nd)(&k, &r, rows, k.SY, data)
					require.True(t, same(wq, gq), "generic omega %v, want %v: %s", gq, wq, where)
					require.True(t, same(wr, gr), "generic res %v, want %v: %s", gr, wr, where)
					require.True(t, same(wb, gb), "generic big %v, want %v: %s", gb, wb, where)
					for _, ks := range Available() {
						q, m, b := ks.Backward(nd)(&k, &r, rows, k.SY, data)
						require.Equal(t, []uint64{math.Float64bits(gq), math.Float64bits(gr), math.Float64bits(gb)},
							[]uint64{math.Float64bits(q), math.Float64bits(m), math.Float64bits(b)}, "%s vs generic: %s", ks.Name, where)
					}
				}
			}
		}
	}
}

// Where den is not > 0 a cell's error is |r| itself: den = 0 with r = 2
// (c0 = −1, cy = 1/2, every u 1, f 0), den < 0 with r = 3 (c0 = −2), den
// = 0 again with data 1 added, and a field of zeros (r = den = 0) gives 0
// — on every set, at every length around the vector widths.
func TestBackwardWithoutDenominator(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, nd := range []int{2, 3} {
		for n := 1; n <= 3*8+3; n++ {
			for _, c := range []struct {
				c0, u, data float64
				omega, res  float64
				description string
			}{{-1, 1, 0, 2, 2, "den = 0"}, {-2, 1, 0, 3, 3, "den < 0"}, {-2, 1, 1, 3, 3, "den = 0 with data"},
				{-2, 1, 2, 3, 3, "den = 1 with data"}, {0.5, 0, 0, 0, 0, "zeros"}} {
				k, src, f, start := backwardGrid(rng, nd, n, 2, func() float64 { return c.u })
				for i := range f {
					if !math.IsNaN(f[i]) {
						f[i] = 0
					}
				}
				k.C0, k.CX, k.CY, k.CZ = c.c0, 0, 0.5, 0
				var r Row
				k.At(&r, src, src, f, start, n)
				r.D = nil
				for _, ks := range Available() {
					q, m, b := ks.Backward(nd)(&k, &r, 2, k.SY, c.data)
					where := fmt.Sprintf("%s %dD n=%d %s", ks.Name, nd, n, c.description)
					require.Equal(t, []float64{c.omega, c.res, c.u}, []float64{q, m, b}, where)
				}
			}
		}
	}
}
