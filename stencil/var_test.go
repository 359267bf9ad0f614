package stencil

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// varCase is one call of a variable-coefficient kernel on random fields:
// rows rows of n cells, stride cells apart, in fields exactly as long as
// the kernel's reach (the last row's cells plus the farthest neighbour),
// so that a read or write past them would panic in the generic kernel.
type varCase struct {
	three                  bool
	k                      VarCoeffs
	u, f                   []float64
	w                      float64
	start, n, rows, stride int
	dlen                   int // the destination's length
}

var varNames = [...]string{"update", "check", "residual", "apply", "smooth"}

// newVarCase draws a case: values with signed zeros among them, face and
// cell coefficients with zeros (holes, held cells) among them; special adds
// NaNs and infinities to u and to the coefficients.
func newVarCase(rng *rand.Rand, three bool, n, rows int, special bool) *varCase {
	vc := &varCase{three: three, n: n, rows: rows, w: 0.5 + rng.Float64()}
	sy := n + 2 + rng.IntN(3) // a row longer than the kernel's
	vc.k.SY, vc.stride = sy, sy
	reach := sy
	if three {
		vc.k.SZ = sy*(rows+2) + rng.IntN(3)
		reach = vc.k.SZ
		if rng.IntN(2) == 0 {
			vc.stride = vc.k.SZ // a column of rows, a plane apart
		}
	}
	vc.start = reach + rng.IntN(2)
	hi := vc.start + (rows-1)*vc.stride + n // past the last row's cells
	vc.dlen = hi
	val := func() float64 {
		switch rng.IntN(12) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		}
		return value(rng)
	}
	coef := func() float64 {
		if rng.IntN(6) == 0 {
			return 0
		}
		return math.Abs(value(rng))
	}
	field := func(m int, g func() float64) []float64 {
		x := make([]float64, m)
		for i := range x {
			x[i] = g()
		}
		return x
	}
	vc.u, vc.f = field(hi+reach, val), field(hi, val)
	vc.k.BX, vc.k.BY = field(hi, coef), field(hi, coef)
	if three {
		vc.k.BZ = field(hi, coef)
	}
	vc.k.S, vc.k.A, vc.k.M, vc.k.W = field(hi, coef), field(hi, val), field(hi, coef), field(hi, coef)
	if special {
		for _, x := range [][]float64{vc.u, vc.u, vc.u, vc.k.BX, vc.k.S, vc.k.A} {
			x[rng.IntN(len(x))] = [...]float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
		}
	}
	return vc
}

// run calls kernel op of ks with or without f and A on a destination
// filled with poison (so that a skipped or stray write shows), returning
// it and the kernel's result.
func (vc *varCase) run(ks Set, op varOp, withF, withA bool) ([]float64, float64) {
	k := vc.k
	if !withA {
		k.A = nil
	}
	f := vc.f
	if !withF {
		f = nil
	}
	d := make([]float64, vc.dlen)
	for i := range d {
		d[i] = poison
	}
	vk := ks.Var(map[bool]int{false: 2, true: 3}[vc.three])
	m := [...]VarKernel{vk.Update, vk.Check, vk.Residual, vk.Apply, vk.Smooth}[op](&k, d, vc.u, f, vc.w, vc.start, vc.n, vc.rows, vc.stride)
	return d, m
}

func (vc *varCase) String() string {
	return fmt.Sprintf("%dD n=%d rows=%d stride=%d sy=%d sz=%d start=%d",
		map[bool]int{false: 2, true: 3}[vc.three], vc.n, vc.rows, vc.stride, vc.k.SY, vc.k.SZ, vc.start)
}

// panics reports whether f panics.
func panics(f func()) (p bool) {
	defer func() { p = recover() != nil }()
	f()
	return false
}

// Every set's variable-coefficient kernels compute exactly the generic
// kernels' bits — every cell of the destination, written or not, and the
// check's maximum — for rows of 1 to 37 cells (every tail after 0 to 4
// whole vectors of either width), 1 to 5 rows, every kernel with and
// without f and A, in 2D and 3D, and with NaNs and infinities among the
// operands; residual and smooth without f panic as the generic does.
func TestVarKernelsMatchGenericBitForBit(t *testing.T) {
	sets := Available()[1:]
	if len(sets) == 0 {
		t.Skip("no vector set on this CPU or build")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, three := range []bool{false, true} {
		for n := 1; n <= 37; n++ {
			for rows := 1; rows <= 5; rows++ {
				vc := newVarCase(rng, three, n, rows, (n+rows)%4 == 0)
				if n == 37 && rows == 5 {
					vc = newVarCase(rng, three, 301, rows, false) // past the generic's chunk
				}
				for op := varUpdate; op <= varSmooth; op++ {
					for _, withF := range []bool{false, true} {
						for _, withA := range []bool{false, true} {
							if (op <= varCheck && withA) || (op == varApply && withF) {
								continue // operands these kernels ignore
							}
							name := fmt.Sprintf("%s %v f=%v A=%v", varNames[op], vc, withF, withA)
							if !withF && (op == varResidual || op == varSmooth) {
								require.True(t, panics(func() { vc.run(Generic, op, withF, withA) }), name)
								for _, ks := range sets {
									require.True(t, panics(func() { vc.run(ks, op, withF, withA) }), "%s: %s", ks.Name, name)
								}
								continue
							}
							want, wm := vc.run(Generic, op, withF, withA)
							for _, ks := range sets {
								got, gm := vc.run(ks, op, withF, withA)
								require.Equal(t, bitsOf(want), bitsOf(got), "%s: %s", ks.Name, name)
								require.Equal(t, math.Float64bits(wm), math.Float64bits(gm), "%s: %s: result", ks.Name, name)
							}
						}
					}
				}
			}
		}
	}
}

// A vector kernel panics where the generic one does: with any one operand
// it reads a cell short of the kernel's reach (length and capacity: both
// slice within the capacity, as Go's reslicing does), or the first row too close
// to the start of the fields; the fields at their full length do not.
func TestVarKernelsBoundsChecked(t *testing.T) {
	sets := Available()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, three := range []bool{false, true} {
		for _, n := range []int{1, 5, 13} {
			vc := newVarCase(rng, three, n, 3, false)
			for op := varUpdate; op <= varSmooth; op++ {
				base := *vc
				short := map[string]func(c *varCase){
					"u":     func(c *varCase) { c.u = c.u[: len(c.u)-1 : len(c.u)-1] },
					"d":     func(c *varCase) { c.dlen-- },
					"f":     func(c *varCase) { c.f = c.f[: len(c.f)-1 : len(c.f)-1] },
					"BX":    func(c *varCase) { c.k.BX = c.k.BX[: len(c.k.BX)-1 : len(c.k.BX)-1] },
					"BY":    func(c *varCase) { c.k.BY = c.k.BY[: len(c.k.BY)-1 : len(c.k.BY)-1] },
					"S":     func(c *varCase) { c.k.S = c.k.S[: len(c.k.S)-1 : len(c.k.S)-1] },
					"M":     func(c *varCase) { c.k.M = c.k.M[: len(c.k.M)-1 : len(c.k.M)-1] },
					"W":     func(c *varCase) { c.k.W = c.k.W[: len(c.k.W)-1 : len(c.k.W)-1] },
					"A":     func(c *varCase) { c.k.A = c.k.A[: len(c.k.A)-1 : len(c.k.A)-1] },
					"start": func(c *varCase) { c.start = max(c.k.SY, c.k.SZ) - 1 },
				}
				if three {
					short["BZ"] = func(c *varCase) { c.k.BZ = c.k.BZ[: len(c.k.BZ)-1 : len(c.k.BZ)-1] }
				}
				unread := map[varOp]string{varUpdate: "M W A", varCheck: "M W A", varResidual: "S W", varApply: "f S W", varSmooth: "S M"}[op]
				for what, cut := range short {
					c := base
					cut(&c)
					name := fmt.Sprintf("%s %v, %s short", varNames[op], &c, what)
					want := panics(func() { c.run(Generic, op, true, true) })
					require.Equal(t, !slices.Contains(strings.Fields(unread), what), want, "generic: %s", name)
					for _, ks := range sets {
						require.Equal(t, want, panics(func() { c.run(ks, op, true, true) }), "%s: %s", ks.Name, name)
					}
				}
				for _, ks := range sets {
					require.False(t, panics(func() { base.run(ks, op, true, true) }), "%s: %s at full length", ks.Name, varNames[op])
				}
			}
		}
	}
}

// refVar is the file comment of varkernel.go written out cell by cell.
func refVar(op varOp, vc *varCase, k *VarCoeffs, d, f []float64) float64 {
	u, m, nan := vc.u, 0.0, false
	for r := range vc.rows {
		for j := range vc.n {
			i := vc.start + r*vc.stride + j
			phi := float64(k.BX[i]*(u[i+1]-u[i])) - float64(k.BX[i-1]*(u[i]-u[i-1]))
			phi += float64(k.BY[i] * (u[i+k.SY] - u[i]))
			phi -= float64(k.BY[i-k.SY] * (u[i] - u[i-k.SY]))
			if vc.three {
				phi += float64(k.BZ[i] * (u[i+k.SZ] - u[i]))
				phi -= float64(k.BZ[i-k.SZ] * (u[i] - u[i-k.SZ]))
			}
			au := 0.0
			if k.A != nil {
				au = float64(k.A[i] * u[i])
			}
			switch op {
			case varUpdate, varCheck:
				if f != nil {
					phi += f[i]
				}
				d[i] = u[i] + float64(k.S[i]*phi)
				if ch := math.Abs(d[i] - u[i]); math.IsNaN(ch) {
					nan = true
				} else if ch > m {
					m = ch
				}
			case varResidual:
				d[i] = float64(k.M[i] * (f[i] - (au - phi)))
			case varApply:
				d[i] = float64(k.M[i] * (au - phi))
			case varSmooth:
				d[i] = u[i] + float64(vc.w*float64(k.W[i]*(f[i]-(au-phi))))
			}
		}
	}
	switch {
	case op != varCheck:
		return 0
	case nan:
		return math.NaN()
	}
	return m
}

// The generic kernels compute the contract's formula cell by cell, with
// and without f and A, rows past the generic's chunk of cells included.
func TestGenericVarMatchesFormula(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, three := range []bool{false, true} {
		for _, n := range []int{1, 2, 7, 300} {
			for _, special := range []bool{false, true} {
				vc := newVarCase(rng, three, n, 3, special)
				for op := varUpdate; op <= varSmooth; op++ {
					for _, withF := range []bool{false, true} {
						for _, withA := range []bool{false, true} {
							if !withF && (op == varResidual || op == varSmooth) {
								continue
							}
							name := fmt.Sprintf("%s %v f=%v A=%v", varNames[op], vc, withF, withA)
							got, gm := vc.run(Generic, op, withF, withA)
							k := vc.k
							if !withA {
								k.A = nil
							}
							f := vc.f
							if !withF {
								f = nil
							}
							want := make([]float64, len(got))
							for i := range want {
								want[i] = poison
							}
							wm := refVar(op, vc, &k, want, f)
							for i := range want {
								if math.IsNaN(want[i]) && math.IsNaN(got[i]) {
									continue // payloads follow the operands' order
								}
								require.Equal(t, math.Float64bits(want[i]), math.Float64bits(got[i]), "%s: cell %d", name, i)
							}
							if math.IsNaN(wm) {
								require.True(t, math.IsNaN(gm), name)
							} else {
								require.Equal(t, math.Float64bits(wm), math.Float64bits(gm), name)
							}
						}
					}
				}
			}
		}
	}
}

// runStream calls ks's streaming update (fenced) with d a copy of init
// (poison where init is nil) placed so that &d[vc.start] lies shift cells
// past a 64-byte boundary, in a buffer of poison a line longer on each
// side; with aliasF, f is d itself. It returns the whole buffer.
func (vc *varCase) runStream(ks Set, init []float64, shift int, withF, aliasF bool, stream bool) []float64 {
	buf := make([]float64, vc.dlen+32)
	for i := range buf {
		buf[i] = poison
	}
	at := int(uintptr(unsafe.Pointer(&buf[8+vc.start])) % 64 / 8)
	o := 8 + (shift-at+8)%8
	d := buf[o : o+vc.dlen : o+vc.dlen]
	if init != nil {
		copy(d, init)
	}
	f := vc.f
	switch {
	case aliasF:
		f = d
	case !withF:
		f = nil
	}
	vk := ks.Var(map[bool]int{false: 2, true: 3}[vc.three])
	kern := vk.Update
	if stream {
		kern = vk.Stream
	}
	kern(&vc.k, d, vc.u, f, 0, vc.start, vc.n, vc.rows, vc.stride)
	Fence()
	return buf[o-8 : o+vc.dlen+8]
}

// Every set's streaming update (Stream) computes the generic update's
// bits, every cell of the destination written or not and nothing past it:
// rows of 1 to 37 cells (every head before an aligned vector and every
// tail after 0 to 4 of them, at either width) and of 301, 1 to 3 rows a
// stride apart that is no multiple of a vector (each row aligned
// differently), the destination's first cell at each of the 8 cells of a
// 64-byte line, without f, with f, and with f the destination itself; NaNs
// and infinities among the operands now and then. With any operand a cell
// short it panics where the generic update does.
func TestVarStreamMatchesUpdate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, three := range []bool{false, true} {
		for n := 1; n <= 38; n++ {
			for rows := 1; rows <= 3; rows++ {
				vc := newVarCase(rng, three, n, rows, (n+rows)%5 == 0)
				if n == 38 {
					vc = newVarCase(rng, three, 301, rows, false)
				}
				for shift := range 8 {
					for _, f := range []string{"nil", "f", "d"} {
						var init []float64
						if f == "d" {
							init = vc.f[:vc.dlen]
						}
						want := vc.runStream(Generic, init, shift, f != "nil", f == "d", false)
						for _, ks := range Available() {
							got := vc.runStream(ks, init, shift, f != "nil", f == "d", true)
							require.Equal(t, bitsOf(want), bitsOf(got), "%s: %v shift=%d f=%s", ks.Name, vc, shift, f)
						}
					}
				}
			}
		}
	}
	for _, three := range []bool{false, true} {
		for _, n := range []int{1, 5, 13, 40} {
			base := *newVarCase(rng, three, n, 3, false)
			short := map[string]func(c *varCase){
				"u":  func(c *varCase) { c.u = c.u[: len(c.u)-1 : len(c.u)-1] },
				"d":  func(c *varCase) { c.dlen-- },
				"f":  func(c *varCase) { c.f = c.f[: len(c.f)-1 : len(c.f)-1] },
				"BX": func(c *varCase) { c.k.BX = c.k.BX[: len(c.k.BX)-1 : len(c.k.BX)-1] },
				"BY": func(c *varCase) { c.k.BY = c.k.BY[: len(c.k.BY)-1 : len(c.k.BY)-1] },
				"S":  func(c *varCase) { c.k.S = c.k.S[: len(c.k.S)-1 : len(c.k.S)-1] },
			}
			if three {
				short["BZ"] = func(c *varCase) { c.k.BZ = c.k.BZ[: len(c.k.BZ)-1 : len(c.k.BZ)-1] }
			}
			for what, cut := range short {
				c := base
				cut(&c)
				require.True(t, panics(func() { c.runStream(Generic, nil, 0, true, false, false) }), "generic: %v, %s short", &c, what)
				for _, ks := range Available() {
					require.True(t, panics(func() { c.runStream(ks, nil, 3, true, false, true) }), "%s: %v, %s short", ks.Name, &c, what)
				}
			}
			for _, ks := range Available() {
				require.False(t, panics(func() { base.runStream(ks, nil, 3, true, false, true) }), "%s: at full length", ks.Name)
			}
		}
	}
}
