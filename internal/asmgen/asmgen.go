// Package asmgen generates stencil's amd64 assembly kernels with avo: the
// AVX2 (4 cells a vector) and AVX-512 (8) variants of every row kernel come
// from one generator, so they cannot drift apart. stencil's tests compare
// the committed kernel_amd64.s and its Go declarations with what Stencil
// returns, and rewrite them with -update (`go generate ./stencil`).
//
// Every kernel evaluates its generic twin's operations in the same order,
// each multiply and add rounded on its own (VMULPD, VADDPD, VSUBPD; never a
// fused multiply-add), so each lane computes the generic kernel's bits.
package asmgen

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"
)

// isa is one vector instruction set: its register kind and width.
type isa struct {
	name  string // in the kernels' names: AVX2, AVX512
	lanes int    // float64 cells a vector
	reg   func(*build.Context) reg.VecVirtual
}

var isas = []isa{
	{"AVX2", 4, func(c *build.Context) reg.VecVirtual { return c.YMM() }},
	{"AVX512", 8, func(c *build.Context) reg.VecVirtual { return c.ZMM() }},
}

// zero clears v.
func (i isa) zero(c *build.Context, v reg.VecVirtual) {
	if i.lanes == 8 {
		c.VPXORQ(v, v, v)
	} else {
		c.VPXOR(v, v, v)
	}
}

// store writes v's lanes to m.
func (i isa) store(c *build.Context, v reg.VecVirtual, m operand.Mem) {
	if i.lanes == 8 {
		c.VMOVDQU64(v, m)
	} else {
		c.VMOVDQU(v, m)
	}
}

// maxAbs folds |t| (as bits, sign cleared; t is overwritten) into the
// lanes' maxima m; AVX2 has no 64-bit integer max, but the patterns, sign
// cleared, are non-negative as signed integers too, so a compare and a
// blend (gt its scratch) do.
func (i isa) maxAbs(c *build.Context, t, m, gt reg.VecVirtual) {
	c.VPSLLQ(operand.U8(1), t, t)
	c.VPSRLQ(operand.U8(1), t, t)
	if i.lanes == 8 {
		c.VPMAXUQ(t, m, m)
		return
	}
	c.VPCMPGTQ(m, t, gt)
	c.VBLENDVPD(gt, t, m, m)
}

// kernel is one row kernel: the update (heat step, Jacobi sweep) or the
// residual, in 2D or 3D, with or without a source.
type kernel struct {
	residual bool
	dims     int
	source   bool
	// check also keeps the largest |d[j] − c[j+1]| (the change of each
	// cell) over all rows, as the bits of its magnitude, lane by lane in
	// out: the run's max|Δu| check in the same pass as the update.
	check bool
	// stream stores with non-temporal stores (VMOVNTPD), past the caches:
	// a grid far larger than them then needs no read of the destination
	// before it is written (16 bytes a cell, not 24). d must be aligned
	// to a vector, and the writer must fence (SFENCE) before another core
	// reads what it wrote: once a sweep, not once a row (a fence a row cost
	// 3D 128³ four fifths of its speed).
	stream bool
}

func (k kernel) name(i isa) string {
	op := "heat"
	if k.residual {
		op = "residual"
	}
	src := ""
	if k.source && !k.residual {
		src = "Src"
	}
	nt := ""
	if k.stream {
		nt = "NT"
	}
	if k.check {
		nt += "Chk"
	}
	return fmt.Sprintf("%s%dD%s%s%s", op, k.dims, src, nt, i.name)
}

// operands are the row pointers the kernel reads, after d and c.
func (k kernel) operands() []string {
	ops := []string{"s", "n"}
	if k.dims == 3 {
		ops = append(ops, "l", "u")
	}
	if k.source || k.residual {
		ops = append(ops, "f")
	}
	return ops
}

// weights are the coefficient arguments.
func (k kernel) weights() []string {
	w := []string{"c0", "cx", "cy"}
	if k.dims == 3 {
		w = append(w, "cz")
	}
	if k.source && !k.residual {
		w = append(w, "cf")
	}
	return w
}

func (k kernel) signature() string {
	out := ""
	if k.check {
		out = ", out *uint64"
	}
	return fmt.Sprintf("func(d, c, %s *float64, cells, rows, stride int, %s float64%s)", strings.Join(k.operands(), ", "), strings.Join(k.weights(), ", "), out)
}

func (k kernel) doc(i isa) []string {
	var formula string
	z := ""
	if k.dims == 3 {
		z = " + cz·(l[j] + u[j])"
	}
	if k.residual {
		formula = fmt.Sprintf("d[j] = f[j] − (c0·c[j+1] − (cx·(c[j] + c[j+2]) + cy·(s[j] + n[j])%s))", z)
	} else {
		src := ""
		if k.source {
			src = " + cf·f[j]"
		}
		formula = fmt.Sprintf("d[j] = c0·c[j+1] + cx·(c[j] + c[j+2]) + cy·(s[j] + n[j])%s%s", z, src)
	}
	stores := ""
	if k.stream {
		stores = fmt.Sprintf(", non-temporal stores, d aligned to %d bytes", 8*i.lanes)
	}
	if k.check {
		stores += fmt.Sprintf("; out[0:%d] gets the bits of the largest |d[j] − c[j+1]| of each lane", i.lanes)
	}
	return []string{
		fmt.Sprintf("%s sets, for j in [0, cells), %d cells a vector (%s%s;", k.name(i), i.lanes, i.name, stores),
		fmt.Sprintf("cells a multiple of %d, c one cell before the row):", i.lanes),
		"",
		"\t" + formula,
		"",
		"summed left to right, each product rounded on its own; then the same for",
		"each of rows−1 more rows, every operand stride cells further on (rows ≥ 1).",
	}
}

// kernels are every kernel stencil uses.
func kernels() []kernel {
	var ks []kernel
	for _, dims := range []int{2, 3} {
		ks = append(ks, kernel{dims: dims}, kernel{dims: dims, source: true}, kernel{residual: true, dims: dims},
			kernel{dims: dims, check: true}, kernel{dims: dims, source: true, check: true})
	}
	// Only 2D streams: 3D's short rows measured 2–4× slower streamed.
	ks = append(ks, kernel{dims: 2, stream: true}, kernel{dims: 2, source: true, stream: true})
	return ks
}

// emit writes one kernel: a loop over whole vectors, the index in bytes.
func emit(c *build.Context, k kernel, i isa) {
	c.Function(k.name(i))
	c.Attributes(attr.NOSPLIT)
	c.Pragma("noescape")
	c.Doc(k.doc(i)...)
	c.SignatureExpr(k.signature())

	ptr := func(name string) operand.Mem {
		return operand.Mem{Base: c.Load(c.Param(name), c.GP64())}
	}
	d, src := ptr("d"), ptr("c")
	ops := map[string]operand.Mem{}
	for _, o := range k.operands() {
		ops[o] = ptr(o)
	}
	cells := c.Load(c.Param("cells"), c.GP64())
	rows := c.Load(c.Param("rows"), c.GP64())
	stride := c.Load(c.Param("stride"), c.GP64())
	c.SHLQ(operand.U8(3), stride)
	// The weights are broadcast straight from the arguments: a legacy-SSE
	// load (MOVSD) between vector code costs a state transition, which
	// measured ~230 ns a call (a 256-cell row ran at a quarter speed).
	w := map[string]reg.VecVirtual{}
	for _, name := range k.weights() {
		b, err := c.Param(name).Resolve()
		if err != nil {
			panic(err) // the signature above declares every weight
		}
		v := i.reg(c)
		c.VBROADCASTSD(b.Addr, v)
		w[name] = v
	}
	var macc reg.VecVirtual
	if k.check {
		macc = i.reg(c)
		i.zero(c, macc)
	}
	// idx runs over the row in bytes, to end = 8·cells.
	idx, end := c.GP64(), c.GP64()
	c.MOVQ(cells, end)
	c.SHLQ(operand.U8(3), end)
	at := func(m operand.Mem, disp int) operand.Mem {
		m.Index, m.Scale, m.Disp = idx, 1, disp
		return m
	}
	// Two vectors an iteration while two remain, then one: the two
	// bodies' loads and arithmetic overlap (measured faster than one a
	// pass on rows in L2).
	step := 8 * i.lanes
	row, two, one, done := k.name(i)+"_row", k.name(i)+"_two", k.name(i)+"_one", k.name(i)+"_done"
	last := c.GP64()
	c.MOVQ(end, last)
	c.SUBQ(operand.U32(2*step), last)
	c.Label(row)
	c.XORQ(idx, idx)
	c.Label(two)
	c.CMPQ(idx, last)
	c.JG(operand.LabelRef(one))
	body(c, k, i, w, d, src, ops, at, 0, macc)
	body(c, k, i, w, d, src, ops, at, step, macc)
	c.ADDQ(operand.U32(2*step), idx)
	c.JMP(operand.LabelRef(two))
	c.Label(one)
	c.CMPQ(idx, end)
	c.JAE(operand.LabelRef(done))
	body(c, k, i, w, d, src, ops, at, 0, macc)
	c.ADDQ(operand.U32(step), idx)
	c.JMP(operand.LabelRef(one))
	c.Label(done)
	// The next row: every operand a stride on.
	c.DECQ(rows)
	c.JZ(operand.LabelRef(k.name(i) + "_end"))
	c.ADDQ(stride, d.Base)
	c.ADDQ(stride, src.Base)
	for _, o := range k.operands() {
		c.ADDQ(stride, ops[o].Base)
	}
	c.JMP(operand.LabelRef(row))
	c.Label(k.name(i) + "_end")
	if k.check {
		i.store(c, macc, operand.Mem{Base: c.Load(c.Param("out"), c.GP64())})
	}
	c.VZEROUPPER()
	c.RET()
}

// body computes one vector of cells at byte offset off from the index.
func body(c *build.Context, k kernel, i isa, w map[string]reg.VecVirtual, d, src operand.Mem, ops map[string]operand.Mem,
	at func(operand.Mem, int) operand.Mem, off int, macc reg.VecVirtual) {
	// addAxis adds wt·(a + b) into acc, t its scratch.
	addAxis := func(acc, t reg.VecVirtual, a, b operand.Mem, wt string) {
		c.VMOVUPD(a, t)
		c.VADDPD(b, t, t)
		c.VMULPD(t, w[wt], t)
		c.VADDPD(t, acc, acc)
	}
	// x = cx·(w + e)
	x := i.reg(c)
	c.VMOVUPD(at(src, off), x)
	c.VADDPD(at(src, off+16), x, x)
	c.VMULPD(x, w["cx"], x)
	acc, y := i.reg(c), i.reg(c)
	if k.residual {
		// The residual's inner sum first: x + cy·(s + n) [+ cz·(l + u)];
		// then acc = c0·m − x and d = f − acc.
		addAxis(x, y, at(ops["s"], off), at(ops["n"], off), "cy")
		if k.dims == 3 {
			addAxis(x, y, at(ops["l"], off), at(ops["u"], off), "cz")
		}
		c.VMOVUPD(at(src, off+8), acc)
		c.VMULPD(acc, w["c0"], acc)
		c.VSUBPD(x, acc, acc)
		c.VMOVUPD(at(ops["f"], off), x)
		c.VSUBPD(acc, x, x)
		c.VMOVUPD(x, at(d, off))
		return
	}
	// acc = c0·m + x, then + cy·(s + n) [+ cz·(l + u)] [+ cf·f].
	c.VMOVUPD(at(src, off+8), acc)
	c.VMULPD(acc, w["c0"], acc)
	c.VADDPD(x, acc, acc)
	addAxis(acc, y, at(ops["s"], off), at(ops["n"], off), "cy")
	if k.dims == 3 {
		addAxis(acc, y, at(ops["l"], off), at(ops["u"], off), "cz")
	}
	if k.source {
		c.VMULPD(at(ops["f"], off), w["cf"], y)
		c.VADDPD(y, acc, acc)
	}
	if k.check {
		// |acc − m| as bits, into the lanes' maxima (as emitMax does).
		c.VSUBPD(at(src, off+8), acc, y)
		i.maxAbs(c, y, macc, x) // x is free by now
	}
	if k.stream {
		c.VMOVNTPD(acc, at(d, off))
		return
	}
	c.VMOVUPD(acc, at(d, off))
}

// emitMax writes the max-norm kernel of i: the lanes of the largest
// |a[j] − b[j]| (diff) or |a[j]| as bit patterns, for j in [0, cells), into
// out[0:lanes]. With the sign bit cleared, the bit patterns of doubles order
// as their values and every NaN lies above +Inf, so an integer max finds the
// largest magnitude or a NaN (stencil's generic maxAbsBits does the same).
func emitMax(c *build.Context, i isa, diff bool) {
	name, sig := "maxAbs"+i.name, "func(a *float64, cells int, out *uint64)"
	what := "|a[j]|"
	if diff {
		name, sig, what = "maxAbsDiff"+i.name, "func(a, b *float64, cells int, out *uint64)", "|a[j] − b[j]|"
	}
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.Pragma("noescape")
	c.Doc(fmt.Sprintf("%s stores into out[0:%d] the bits of the largest %s (sign", name, i.lanes, what),
		fmt.Sprintf("bit cleared) over each lane's cells, for j in [0, cells), cells a multiple of %d.", i.lanes))
	c.SignatureExpr(sig)
	a := operand.Mem{Base: c.Load(c.Param("a"), c.GP64())}
	var b operand.Mem
	if diff {
		b = operand.Mem{Base: c.Load(c.Param("b"), c.GP64())}
	}
	end := c.Load(c.Param("cells"), c.GP64())
	out := operand.Mem{Base: c.Load(c.Param("out"), c.GP64())}
	idx := c.GP64()
	c.XORQ(idx, idx)
	c.SHLQ(operand.U8(3), end)
	m := i.reg(c)
	i.zero(c, m)
	loop, done := name+"_loop", name+"_done"
	c.Label(loop)
	c.CMPQ(idx, end)
	c.JAE(operand.LabelRef(done))
	t := i.reg(c)
	c.VMOVUPD(operand.Mem{Base: a.Base, Index: idx, Scale: 1}, t)
	if diff {
		c.VSUBPD(operand.Mem{Base: b.Base, Index: idx, Scale: 1}, t, t)
	}
	i.maxAbs(c, t, m, i.reg(c))
	c.ADDQ(operand.U32(8*i.lanes), idx)
	c.JMP(operand.LabelRef(loop))
	c.Label(done)
	i.store(c, m, out)
	c.VZEROUPPER()
	c.RET()
}

// emitMix writes the weighted sum of two rows of i: d[j] = wa·a[j] +
// wb·b[j], or with add d[j] = d[j] + (wa·a[j] + wb·b[j]) (the multigrid's
// linear prolongation), for j in [0, cells), cells a multiple of the lanes.
func emitMix(c *build.Context, i isa, add bool) {
	name, formula := "mix"+i.name, "d[j] = wa·a[j] + wb·b[j]"
	if add {
		name, formula = "mixAdd"+i.name, "d[j] = d[j] + (wa·a[j] + wb·b[j])"
	}
	c.Function(name)
	c.Attributes(attr.NOSPLIT)
	c.Pragma("noescape")
	c.Doc(fmt.Sprintf("%s sets, for j in [0, cells), cells a multiple of %d (%s):", name, i.lanes, i.name), "", "\t"+formula, "",
		"each product rounded on its own.")
	c.SignatureExpr("func(d, a, b *float64, cells int, wa, wb float64)")
	ptr := func(name string) reg.GPVirtual { return c.Load(c.Param(name), c.GP64()).(reg.GPVirtual) }
	d, a, b := ptr("d"), ptr("a"), ptr("b")
	end := c.Load(c.Param("cells"), c.GP64())
	c.SHLQ(operand.U8(3), end)
	wts := map[string]reg.VecVirtual{}
	for _, w := range []string{"wa", "wb"} {
		m, err := c.Param(w).Resolve()
		if err != nil {
			panic(err)
		}
		wts[w] = i.reg(c)
		c.VBROADCASTSD(m.Addr, wts[w])
	}
	idx := c.GP64()
	c.XORQ(idx, idx)
	at := func(base reg.GPVirtual) operand.Mem { return operand.Mem{Base: base, Index: idx, Scale: 1} }
	loop, done := name+"_loop", name+"_done"
	c.Label(loop)
	c.CMPQ(idx, end)
	c.JAE(operand.LabelRef(done))
	x, y := i.reg(c), i.reg(c)
	c.VMULPD(at(a), wts["wa"], x)
	c.VMULPD(at(b), wts["wb"], y)
	c.VADDPD(y, x, x)
	if add {
		c.VADDPD(at(d), x, x)
	}
	c.VMOVUPD(x, at(d))
	c.ADDQ(operand.U32(8*i.lanes), idx)
	c.JMP(operand.LabelRef(loop))
	c.Label(done)
	c.VZEROUPPER()
	c.RET()
}

// Stencil is the assembly of stencil's kernels and the Go declarations of
// them.
func Stencil() (asm, stubs []byte, err error) {
	c := build.NewContext()
	c.ConstraintExpr("amd64,!purego")
	for _, k := range kernels() {
		for _, i := range isas {
			emit(c, k, i)
		}
	}
	for _, diff := range []bool{true, false} {
		for _, i := range isas {
			emitMax(c, i, diff)
		}
	}
	for _, add := range []bool{false, true} {
		for _, i := range isas {
			emitMix(c, i, add)
		}
	}
	c.Function("sfence")
	c.Attributes(attr.NOSPLIT)
	c.Doc("sfence orders the non-temporal stores before it before every store after it.")
	c.SignatureExpr("func()")
	c.SFENCE()
	c.RET()
	f, err := c.Result()
	if err != nil {
		return nil, nil, err
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, nil, err
	}
	cfg := printer.Config{Name: "internal/asmgen (go generate ./stencil)", Pkg: "stencil"}
	if asm, err = printer.NewGoAsm(cfg).Print(f); err != nil {
		return nil, nil, err
	}
	if stubs, err = printer.NewStubs(cfg).Print(f); err != nil {
		return nil, nil, err
	}
	return asm, stubs, nil
}
