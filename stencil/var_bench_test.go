package stencil

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// varBox is an n×n (or n³) box with one ghost layer, its fields and
// coefficients laid out as the C reference's (../shared/refbench, jacobi
// N 0 STEPS DIMS var): two materials, k = 1 and 10 split along x, the face
// coefficients their harmonic means over h², s = dt/ρc at 0.9 of the
// stability limit.
type varBox struct {
	nd, n, sy, sz int
	u, d          []float64
	k             VarCoeffs
}

func newVarBox(nd, n int) *varBox {
	w := n + 2
	size := w * w
	b := &varBox{nd: nd, n: n, sy: w}
	if nd == 3 {
		b.sz = w * w
		size *= w
	}
	field := func() []float64 { return make([]float64, size) }
	b.u, b.d = field(), field()
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range b.u {
		b.u[i] = rng.Float64()
		b.d[i] = b.u[i]
	}
	h := 1 / float64(n)
	kOf := func(i int) float64 {
		if i%w < w/2 {
			return 1
		}
		return 10
	}
	harm := func(a, c float64) float64 { return 2 * a * c / (a + c) / (h * h) }
	b.k = VarCoeffs{SY: b.sy, SZ: b.sz, BX: field(), BY: field(), S: field()}
	if nd == 3 {
		b.k.BZ = field()
	}
	s := 0.9 / (2 * float64(nd) * 10 / (h * h))
	for i := range size {
		b.k.BX[i] = harm(kOf(i), kOf(min(i+1, size-1)))
		b.k.BY[i] = harm(kOf(i), kOf(i))
		if nd == 3 {
			b.k.BZ[i] = harm(kOf(i), kOf(i))
		}
		b.k.S[i] = s
	}
	return b
}

// planes are the starts of the box's planes of rows (one in 2D).
func (b *varBox) planes() []int {
	if b.nd == 2 {
		return []int{b.sy + 1}
	}
	p := make([]int, b.n)
	for z := range p {
		p[z] = (z+1)*b.sz + b.sy + 1
	}
	return p
}

// benchSizes are the box sizes of a dimension: HEAT_VAR_BENCH_N2 and
// HEAT_VAR_BENCH_N3 (comma-separated) replace the defaults, 2048 in 2D
// and 128 in 3D (8192 and 256 are the C reference's other sizes).
func benchSizes(nd int) []int {
	def := map[int][]int{2: {2048}, 3: {128}}[nd]
	v := os.Getenv(fmt.Sprintf("HEAT_VAR_BENCH_N%d", nd))
	if v == "" {
		return def
	}
	var ns []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			panic(fmt.Sprintf("HEAT_VAR_BENCH_N%d: %q is not a size", nd, s))
		}
		ns = append(ns, n)
	}
	return ns
}

// BenchmarkVar is the variable-coefficient update over a whole box once an
// iteration (u and d swapped after each, as the C reference's steps), set by
// set (forced with Use), against the constant-coefficient update (Rows) of
// the same box; Mupdates/s is million cell updates a second.
func BenchmarkVar(b *testing.B) {
	for _, nd := range []int{2, 3} {
		for _, n := range benchSizes(nd) {
			// Made by the first benchmark that runs, not for those -bench
			// leaves out.
			box := sync.OnceValue(func() *varBox { return newVarBox(nd, n) })
			for _, coef := range []string{"var", "const"} {
				for _, ks := range Available() {
					b.Run(fmt.Sprintf("dims=%d/n=%d/coef=%s/set=%s", nd, n, coef, ks.Name), func(b *testing.B) {
						defer Use(ks)()
						box := box()
						step := box.varStep(false)
						bytes := 8 * (3 + nd) // u, d, S and a face array per axis
						if coef == "const" {
							step, bytes = box.constStep(), 16
						}
						cells := 1
						for range nd {
							cells *= n
						}
						b.SetBytes(int64(bytes * cells))
						b.ResetTimer()
						for b.Loop() {
							step()
						}
						b.ReportMetric(float64(cells)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
					})
				}
			}
		}
	}
}

// BenchmarkVarStream is BenchmarkVar's update (coef=var) stored plainly
// (Update) or past the caches (Stream, fenced after each sweep), set by
// set; HEAT_VAR_BENCH_N2 and N3 set the sizes as there (streaming is for
// fields far past the caches, such as 8192²; 3D has no streaming kernel,
// its Stream is Update).
func BenchmarkVarStream(b *testing.B) {
	for _, nd := range []int{2, 3} {
		for _, n := range benchSizes(nd) {
			box := sync.OnceValue(func() *varBox { return newVarBox(nd, n) })
			for _, store := range []string{"plain", "stream"} {
				for _, ks := range Available() {
					b.Run(fmt.Sprintf("dims=%d/n=%d/store=%s/set=%s", nd, n, store, ks.Name), func(b *testing.B) {
						defer Use(ks)()
						box := box()
						step := box.varStep(store == "stream")
						cells := 1
						for range nd {
							cells *= n
						}
						b.SetBytes(int64(8 * (3 + nd) * cells))
						b.ResetTimer()
						for b.Loop() {
							step()
						}
						b.ReportMetric(float64(cells)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
					})
				}
			}
		}
	}
}

// varStep is one update of the box with Active's variable-coefficient
// kernel: Update, or with stream Stream and a Fence after the sweep.
func (b *varBox) varStep(stream bool) func() {
	vk, ps := Active.Var(b.nd), b.planes()
	kern := vk.Update
	if stream {
		kern = vk.Stream
	}
	return func() {
		for _, p := range ps {
			kern(&b.k, b.d, b.u, nil, 0, p, b.n, b.n, b.sy)
		}
		if stream {
			Fence()
		}
		b.u, b.d = b.d, b.u
	}
}

// constStep is one update of the box with Active's constant-coefficient
// many-row kernel (FTCS weights of the same limit).
func (b *varBox) constStep() func() {
	rk := Active.Rows(b.nd)
	c := 0.9 / (2 * float64(b.nd))
	k := &Coeffs{SY: b.sy, SZ: b.sz, C0: 1 - 2*float64(b.nd)*c, CX: c, CY: c}
	if b.nd == 3 {
		k.CZ = c
	}
	var r Row
	ps := b.planes()
	return func() {
		for _, p := range ps {
			k.At(&r, b.d, b.u, nil, p, b.n)
			rk(k, &r, b.n, b.sy)
		}
		b.u, b.d = b.d, b.u
	}
}

// BenchmarkVarBackward is the backward error's pass of variable
// coefficients (VarKernels.Backward) over the box, set by set, beside the
// residual kernel over it: the pass that ends each media solve's cycle
// against the pass it replaced a part of.
func BenchmarkVarBackward(b *testing.B) {
	for _, nd := range []int{2, 3} {
		for _, n := range benchSizes(nd) {
			box := sync.OnceValue(func() *varBox {
				vb := newVarBox(nd, n)
				vb.k.M = make([]float64, len(vb.u))
				for i := range vb.k.M {
					vb.k.M[i] = 1
				}
				return vb
			})
			for _, op := range []string{"backward", "residual"} {
				for _, ks := range Available() {
					b.Run(fmt.Sprintf("dims=%d/n=%d/op=%s/set=%s", nd, n, op, ks.Name), func(b *testing.B) {
						box := box()
						vk, ps := ks.Var(nd), box.planes()
						for b.Loop() {
							for _, p := range ps {
								if op == "backward" {
									vk.Backward(&box.k, box.u, box.d, 0, p, box.n, box.n, box.sy)
								} else {
									vk.Residual(&box.k, box.k.S, box.u, box.d, 0, p, box.n, box.n, box.sy)
								}
							}
						}
						cells := 1
						for range nd {
							cells *= n
						}
						b.ReportMetric(float64(cells)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mupdates/s")
					})
				}
			}
		}
	}
}
